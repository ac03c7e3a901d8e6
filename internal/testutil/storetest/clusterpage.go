package storetest

import (
	"context"
	"fmt"
	"testing"
)

// testClusterPage pages through one cluster type's clusters, by name, with their count.
func (s suite) testClusterPage(t *testing.T) {
	store, _ := s.open(t)
	e := start(t, store, newClock())
	ctx := context.Background()
	for i := range 5 {
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
	if fmt.Sprint(names) != "[edge-0 edge-1 edge-2 edge-3 edge-4]" {
		t.Fatalf("paged names %v", names)
	}
	if page, total, err := e.hub.ClusterPage(ctx, "dev", "nothing", 0, 10); err != nil || total != 0 || len(page) != 0 {
		t.Fatalf("an unknown cluster type: %v, %d, %v", page, total, err)
	}
}
