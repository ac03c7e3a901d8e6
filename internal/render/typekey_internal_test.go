package render

import (
	"fmt"
	"slices"
	"testing"

	"github.com/fleetform/fleetform/internal/schedule"
)

// TestGroupByWorkload: assignments grouped in place (each workload's following each other,
// in order) and through the map (in any order) make the same groups, each listing its
// workload's assignments in their order.
func TestGroupByWorkload(t *testing.T) {
	mk := func(wls ...string) []*Assignment {
		as := make([]*Assignment, len(wls))
		for i, wl := range wls {
			as[i] = &Assignment{Assignment: &schedule.Assignment{Workload: wl, DeploymentTarget: fmt.Sprint(i)}}
		}
		return as
	}
	flatten := func(as []*Assignment, groups []workloadGroup, members []int32) []string {
		var out []string
		for _, g := range groups {
			for k := g.first; k < g.first+g.count; k++ {
				a := as[member(members, k)]
				if a.Workload != g.name {
					t.Fatalf("group %s holds %s", g.name, a.Workload)
				}
				out = append(out, g.name+"/"+a.DeploymentTarget)
			}
		}
		return out
	}
	for _, c := range []struct {
		wls   []string
		want  []string
		inMap bool
	}{
		{[]string{"a", "a", "b", "c", "c"}, []string{"a/0", "a/1", "b/2", "c/3", "c/4"}, false},
		{[]string{"b", "a", "b"}, []string{"a/1", "b/0", "b/2"}, true},
		{[]string{"a", "b", "a"}, []string{"a/0", "a/2", "b/1"}, true},
		{[]string{"", "", "x"}, []string{"/0", "/1", "x/2"}, false},
		{nil, nil, false},
	} {
		as := mk(c.wls...)
		groups, members := groupByWorkload(as)
		if got := flatten(as, groups, members); !slices.Equal(got, c.want) || (members != nil) != c.inMap {
			t.Errorf("%v: %v (through the map: %v), want %v", c.wls, got, members != nil, c.want)
		}
		mg, mm := groupByWorkloadMap(as)
		if got := flatten(as, mg, mm); !slices.Equal(got, c.want) {
			t.Errorf("%v through the map: %v, want %v", c.wls, got, c.want)
		}
	}
}
