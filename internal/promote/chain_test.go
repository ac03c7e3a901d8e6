package promote

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fleetform/fleetform/api/v1alpha1"
	"github.com/fleetform/fleetform/internal/controlplane"
)

func envInfo(name, from string) controlplane.EnvironmentInfo {
	e := &v1alpha1.Environment{Metadata: v1alpha1.ObjectMeta{Name: name}}
	if from != "" {
		e.Spec.Promotion = &v1alpha1.Promotion{From: from, Soak: "30m"}
	}
	return controlplane.EnvironmentInfo{Name: name, Object: &controlplane.Environment{Environment: e}}
}

func TestChain(t *testing.T) {
	c, diags := NewChain([]controlplane.EnvironmentInfo{envInfo("prod-ring-1", "prod-ring-0"), envInfo("dev", ""),
		envInfo("prod-ring-0", "stage"), envInfo("stage", "dev"), envInfo("canary", "dev")})
	if len(diags) > 0 {
		t.Fatal(diags)
	}
	if diff := cmp.Diff([]string{"canary", "dev", "prod-ring-0", "prod-ring-1", "stage"}, c.Order); diff == "" {
		t.Fatal("order is alphabetical, not sources first")
	}
	pos := map[string]int{}
	for i, e := range c.Order {
		pos[e] = i
	}
	for env, g := range c.Gates {
		if g.From != "" && pos[g.From] > pos[env] {
			t.Errorf("%s comes before its source %s in %v", env, g.From, c.Order)
		}
	}
	if diff := cmp.Diff([]string{"canary", "stage"}, c.Next("dev")); diff != "" {
		t.Errorf("rings after dev (-want +got):\n%s", diff)
	}
	if g := c.Gates["stage"]; g.MinCompliantPercent != 100 || g.Soak.Minutes() != 30 {
		t.Errorf("defaults: %+v", g)
	}

	_, diags = NewChain([]controlplane.EnvironmentInfo{envInfo("a", "b"), envInfo("b", "a"), envInfo("c", "nope"), envInfo("d", "d")})
	var msgs []string
	for _, d := range diags {
		msgs = append(msgs, d.Message)
	}
	joined := strings.Join(msgs, "\n")
	for _, want := range []string{`environment "nope" does not exist`, "the promotion chain has a cycle", "cannot promote from itself"} {
		if !strings.Contains(joined, want) {
			t.Errorf("diagnostics %q lack %q", joined, want)
		}
	}
}
