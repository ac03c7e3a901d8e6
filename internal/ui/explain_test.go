package ui_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/fleetform/fleetform/internal/access"
	"github.com/fleetform/fleetform/internal/authoring"
	"github.com/fleetform/fleetform/internal/controlplane"
	"github.com/fleetform/fleetform/internal/pipeline"
	"github.com/fleetform/fleetform/internal/render"
)

// Schedule loads an environment of the control plane and schedules it, as serve does.
func (c *controlPlane) Schedule(ctx context.Context, env string) (*pipeline.Run, error) {
	cp, err := controlplane.Open(ctx, c.dir, controlplane.Options{})
	if err != nil {
		return nil, err
	}
	return pipeline.Load(ctx, cp, env, pipeline.UpToSchedule, render.Options{})
}

func TestExplainPages(t *testing.T) {
	f := newFleet(t)
	cp := newControlPlane(t)
	f.web.SetScheduler(cp)
	ctx := t.Context()
	workload, err := authoring.AddWorkload("shop", "retail", nil, "web", "dev", "https://github.com/org/shop-gitops", "main", "./dev",
		map[string]string{"purpose": "test"})
	if err != nil {
		t.Fatal(err)
	}
	policy, err := authoring.AddPolicy("tests-east", "dev", "", "purpose=test", "region=east")
	if err != nil {
		t.Fatal(err)
	}
	ops := []authoring.Operation{
		authoring.AddClusterType("east", "dev", map[string]string{"region": "east"}, "", "", ""),
		authoring.AddClusterType("west", "dev", map[string]string{"region": "west"}, "", "", ""),
		workload, policy,
		{Op: authoring.OpSet, Kind: "ConfigMap", Env: "dev", Scope: &authoring.ConfigScope{ClusterType: "east"}, Data: map[string]any{"REPLICAS": "3"}},
	}
	for _, op := range ops {
		if _, err := cp.Change(ctx, []authoring.Operation{op}, false, access.Identity{Token: "test", Admin: true}); err != nil {
			t.Fatalf("%s: %v", op.Describe(), err)
		}
	}
	c := client(t)
	pages := map[string][]string{
		"/explain?env=dev&clusterType=east&target=shop-web": {"shop-web is on east in dev", "policy tests-east", "REPLICAS",
			"environments/dev/config/cluster-type-east.yaml:"},
		"/explain?env=dev&clusterType=west&target=shop-web": {"shop-web is not on west in dev", "region"},
		"/explain?env=dev&target=shop-web":                  {"Where could shop-web go?", "east", "west"},
		"/explain?env=dev&clusterType=east":                 {"Every deployment target of dev on cluster type east", "shop-web"},
		// The form offers the environment's cluster types and targets.
		"/explain":         {"Deployment target", `<datalist id="known-types"><option value="east"><option value="west">`, `<option value="shop-web">`},
		"/explain?env=dev": {`list="known-targets"`, `<option value="shop-web">`},
	}
	for path, wants := range pages {
		status, body, _ := f.get(t, c, path, f.readToken)
		if status != http.StatusOK {
			t.Errorf("GET %s: %d\n%s", path, status, body)
			continue
		}
		for _, w := range wants {
			if !strings.Contains(body, w) {
				t.Errorf("GET %s lacks %q", path, w)
			}
		}
	}
	if status, body, _ := f.get(t, c, "/explain?env=dev&target=nothing", f.readToken); status != http.StatusNotFound || !strings.Contains(body, "nothing") {
		t.Errorf("an unknown target: %d\n%s", status, body)
	}
}
