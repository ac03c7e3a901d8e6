package authoring

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"testing"

	"github.com/fleetform/fleetform/internal/dev/fleetgen"
)

// TestRenderCache: changes made one after another with a RenderCache have the results of
// changes made without one, whether they are valid or refused.
func TestRenderCache(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	if err := fleetgen.Write(dir, fleetgen.Spec{Targets: 20, ClusterTypes: 4}); err != nil {
		t.Fatal(err)
	}
	cfgs, err := filepath.Glob(filepath.Join(dir, "environments", "dev", "cluster-types", "*", "*", "*-config.yaml"))
	if err != nil || len(cfgs) < 2 {
		t.Fatalf("cluster-type configs: %v, %v", cfgs, err)
	}
	set := func(clusterType, key, value string) Operation {
		return Operation{Op: "set", Kind: "ConfigMap", Env: "dev", Data: map[string]any{key: value}, Scope: &ConfigScope{ClusterType: clusterType}}
	}
	ct := func(i int) string { return filepath.Base(filepath.Dir(cfgs[i])) }
	cache := &RenderCache{}
	for _, c := range []struct {
		name  string
		op    Operation
		valid bool
	}{
		{"a new value", set(ct(0), "BENCH_VALUE", "1"), true},
		{"a value out of the schema", set(ct(0), "REPLICAS", "500"), false},
		{"another value out of the schema", set(ct(1), "REPLICAS", "51"), false},
		{"a value in the schema", set(ct(1), "REPLICAS", "5"), true},
		{"the new value changed", set(ct(0), "BENCH_VALUE", "2"), true},
	} {
		req := Request{ControlPlane: dir, Operations: []Operation{c.op}, Mode: ModeDryRun}
		want, wantErr := Apply(ctx, req)
		req.Renders = cache
		got, err := Apply(ctx, req)
		if !errors.Is(err, wantErr) || (err == nil) != c.valid || jsonOf(t, got) != jsonOf(t, want) {
			t.Fatalf("%s: with the cache: %v\n%s\nwithout: %v\n%s", c.name, err, jsonOf(t, got), wantErr, jsonOf(t, want))
		}
		if c.valid {
			req.Mode = ModeWrite
			if _, err := Apply(ctx, req); err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
		}
	}
	if len(cache.known()) == 0 {
		t.Error("the cache remembers nothing")
	}
}

func jsonOf(t *testing.T, v any) string {
	t.Helper()
	b, err := json.MarshalIndent(v, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
