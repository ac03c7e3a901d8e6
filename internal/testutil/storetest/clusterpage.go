package storetest

import (
	"context"
	"fmt"
	"testing"

	"github.com/fleetform/fleetform/internal/hub"
)

// testClusterPage pages through one cluster type's clusters, by name in natural order
// (edge-2 before edge-10), with their count.
func (s suite) testClusterPage(t *testing.T) {
	store, _ := s.open(t)
	e := start(t, store, newClock())
	ctx := context.Background()
	for _, i := range []int{0, 10, 2, 1, 3} {
		e.register(fmt.Sprintf("edge-%d", i), "dev", "edge")
	}
	e.register("core-0", "dev", "core")
	e.register("edge-x", "prod", "edge")
	var names []string
	for offset := 0; ; offset += 2 {
		page, total, err := e.hub.ClusterPage(ctx, "dev", "edge", offset, 2)
		if err != nil || total != 5 {
			t.Fatalf("page at %d: total %d, %v", offset, total, err)
		}
		if len(page) == 0 {
			break
		}
		for _, c := range page {
			if c.Environment != "dev" || c.ClusterType != "edge" {
				t.Fatalf("page at %d holds %+v", offset, c.Cluster)
			}
			names = append(names, c.Name)
		}
	}
	if fmt.Sprint(names) != "[edge-0 edge-1 edge-2 edge-3 edge-10]" { // natural order
		t.Fatalf("paged names %v", names)
	}
	if page, total, err := e.hub.ClusterPage(ctx, "dev", "nothing", 0, 10); err != nil || total != 0 || len(page) != 0 {
		t.Fatalf("an unknown cluster type: %v, %d, %v", page, total, err)
	}
}

// testSearchClusters selects clusters by part of their name (any case), environment, state
// and label; a state or label key that cannot be one is refused.
func (s suite) testSearchClusters(t *testing.T) {
	store, _ := s.open(t)
	e := start(t, store, newClock())
	ctx := context.Background()
	for _, c := range []hub.Cluster{{Name: "edge-0", Environment: "dev", ClusterType: "edge"}, {Name: "edge-1", Environment: "dev", ClusterType: "edge"},
		{Name: "edge-2", Environment: "dev", ClusterType: "edge"}, {Name: "core-0", Environment: "dev", ClusterType: "core", Labels: map[string]string{"site": "lyon"}},
		{Name: "edge-x", Environment: "prod", ClusterType: "edge", Labels: map[string]string{"site": "turin"}}} {
		if _, err := e.hub.RegisterCluster(ctx, c, false); err != nil {
			t.Fatal(err)
		}
	}
	e.mustReport(hub.Report{Cluster: "edge-0", Revision: "r1", Status: hub.Compliant})
	e.mustReport(hub.Report{Cluster: "edge-1", Revision: "r1", Status: hub.NonCompliant})
	for _, c := range []struct {
		f    hub.ClusterFilter
		want string
	}{
		{hub.ClusterFilter{Name: "EDGE"}, "[edge-0 edge-1 edge-2 edge-x]"},
		{hub.ClusterFilter{Environment: "dev", State: string(hub.Compliant)}, "[edge-0]"},
		{hub.ClusterFilter{State: string(hub.NonCompliant)}, "[edge-1]"},
		{hub.ClusterFilter{State: string(hub.StateUnknown)}, "[core-0 edge-2 edge-x]"},
		{hub.ClusterFilter{LabelKey: "site", LabelValue: "lyon"}, "[core-0]"},
		{hub.ClusterFilter{Environment: "prod", LabelKey: "site", LabelValue: "lyon"}, "[]"},
		{hub.ClusterFilter{Name: "%"}, "[]"},
	} {
		page, total, err := e.hub.SearchClusters(ctx, c.f, 0, 10)
		var names []string
		for _, r := range page {
			names = append(names, r.Name)
		}
		if err != nil || fmt.Sprint(names) != c.want || total != len(names) {
			t.Errorf("search %+v: %v (total %d), %v; want %s", c.f, names, total, err, c.want)
		}
	}
	for _, f := range []hub.ClusterFilter{{State: "Broken"}, {LabelKey: `site" OR 1=1`}} {
		if _, _, err := e.hub.SearchClusters(ctx, f, 0, 10); hub.ErrorCode(err) != hub.CodeInvalid {
			t.Errorf("search %+v: %v, want invalid", f, err)
		}
	}
}
