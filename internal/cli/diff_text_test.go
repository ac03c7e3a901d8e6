package cli

import (
	"strings"
	"testing"

	"github.com/fleetform/fleetform/internal/hub"
)

func TestDiffTextShowsStructuredValuesAsYAML(t *testing.T) {
	d := hub.EnvDiff{From: "dev", To: "prod", Workloads: []hub.WorkloadDiff{{Workload: "shop", Config: []hub.ConfigDiff{
		{Key: "DB", From: []any{map[string]any{"host": "db", "pool": 5}}, To: []any{map[string]any{"host": "db", "pool": 20}}},
		{Key: "ENVIRONMENT", From: []any{"dev"}, To: []any{"prod"}, Expected: true},
		{Key: "PORTS", From: []any{[]any{80, 443}}, To: []any{}},
	}}}}
	var b strings.Builder
	if err := diffText(&b, d); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"shop: config DB:\n  dev:\n    host: db\n    pool: 5\n  prod:\n    host: db\n    pool: 20\n",
		"shop: config ENVIRONMENT (differs by the environment's name, as expected):\n  dev: dev\n  prod: prod\n",
		"shop: config PORTS:\n  dev:\n    - 80\n    - 443\n  prod: (unset)\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("diff text lacks\n%s\ngot:\n%s", want, out)
		}
	}
	if strings.Contains(out, "map[") {
		t.Errorf("Go map notation in:\n%s", out)
	}
}
