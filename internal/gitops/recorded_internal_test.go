package gitops

import (
	"maps"
	"strings"
	"testing"

	"github.com/fleetform/fleetform/internal/render"
	"github.com/fleetform/fleetform/internal/schedule"
)

func assignedTo(targets ...string) []*render.Assignment {
	as := make([]*render.Assignment, len(targets))
	for i, dt := range targets {
		as[i] = &render.Assignment{Assignment: &schedule.Assignment{DeploymentTarget: dt}}
	}
	return as
}

// TestRecordedByPositionOrByName: a shard and keys that list exactly the current targets,
// in order, are held by position; any other list (a target added, removed or moved) by
// name; both answer the same, and a malformed file is an error either way.
func TestRecordedByPositionOrByName(t *testing.T) {
	const shardData = "a d1 w1\nb d2 -\nc d3 w3\n"
	const keysData = "a k1\nb k2\nc k3\n"
	want := shard{"a": {digest: "d1", workload: "w1"}, "b": {digest: "d2"}, "c": {digest: "d3", workload: "w3"}}
	wantKeys := assignmentKeys{"a": "k1", "b": "k2", "c": "k3"}
	for _, tc := range []struct {
		name       string
		targets    []string
		byPosition bool
	}{
		{"the same targets", []string{"a", "b", "c"}, true},
		{"one removed", []string{"a", "c"}, false},
		{"one added", []string{"a", "b", "c", "d"}, false},
		{"one renamed", []string{"a", "b", "x"}, false},
		{"another order", []string{"b", "a", "c"}, false},
		{"none", nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			as := assignedTo(tc.targets...)
			var r recorded
			if err := r.setShard("ct", []byte(shardData), as); err != nil {
				t.Fatal(err)
			}
			if err := r.setKeys("ct", []byte(keysData), as); err != nil {
				t.Fatal(err)
			}
			if got := r.at != nil && r.keysAt != nil; got != tc.byPosition {
				t.Fatalf("held by position: %v, want %v", got, tc.byPosition)
			}
			if r.byName != nil && r.at != nil || !r.trusted() {
				t.Fatalf("held both ways or not at all: %+v", r)
			}
			if !maps.Equal(r.shard(as), want) || !maps.Equal(r.keys(as), wantKeys) {
				t.Fatalf("shard %v, keys %v; want %v, %v", r.shard(as), r.keys(as), want, wantKeys)
			}
			for _, a := range as {
				a.InputDigest, a.Workload = want[a.DeploymentTarget].digest, want[a.DeploymentTarget].workload
			}
			if got := r.lists(as); got != tc.byPosition {
				t.Fatalf("lists its current digests: %v, want %v (by position)", got, tc.byPosition)
			}
			if tc.byPosition {
				as[1].InputDigest = "other"
				if r.lists(as) {
					t.Fatal("lists a digest changed")
				}
				as[1].InputDigest = want[as[1].DeploymentTarget].digest
			}
			for i, a := range as {
				e, ok := r.entry(i, a)
				w, wok := want[a.DeploymentTarget]
				if e != w || ok != wok || r.key(i, a) != wantKeys[a.DeploymentTarget] {
					t.Fatalf("%s: entry %+v %v, key %q; want %+v %v, %q", a.DeploymentTarget, e, ok, r.key(i, a), w, wok, wantKeys[a.DeploymentTarget])
				}
			}
		})
	}
	for _, bad := range []string{"a d1 w1\nb d2\nc d3 w3\n", "a d1 w1\nb\td2 w2\nc d3 w3\n"} {
		var r recorded
		if err := r.setShard("ct", []byte(bad), assignedTo("a", "b", "c")); err == nil || !strings.Contains(err.Error(), ":2:") {
			t.Errorf("shard %q: error %v, want one naming line 2", bad, err)
		}
	}
	for _, bad := range []string{"a k1\nb\nc k3\n", "a k1\nb k2 x\nc k3\n"} {
		var r recorded
		if err := r.setKeys("ct", []byte(bad), assignedTo("a", "b", "c")); err == nil || !strings.Contains(err.Error(), ":2:") {
			t.Errorf("keys %q: error %v, want one naming line 2", bad, err)
		}
	}
}
