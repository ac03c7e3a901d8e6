package render

import (
	"testing"

	"github.com/fleetform/fleetform/internal/controlplane"
	"github.com/fleetform/fleetform/internal/schedule"
)

// TestOutputPointsAtEveryAssignment: the output made a chunk at a time points each entry
// at the scheduled assignment of the same index, whatever the number of chunks.
func TestOutputPointsAtEveryAssignment(t *testing.T) {
	for _, n := range []int{0, 1, preemptChunk - 1, preemptChunk, 2*preemptChunk + 3} {
		sched := &schedule.Result{Assignments: make([]schedule.Assignment, n)}
		rr := NewRenderer(&controlplane.Snapshot{Environment: "dev"}, sched, Options{})
		out := rr.Output().Assignments
		if len(out) != n {
			t.Fatalf("%d assignments: the output has %d", n, len(out))
		}
		for i := range out {
			if out[i].Assignment != &sched.Assignments[i] {
				t.Fatalf("%d assignments: entry %d points elsewhere", n, i)
			}
		}
	}
}

// TestTargetDigests: the digests made for the snapshot's targets when the renderer is made
// are the ones a target would get on its own; a target the snapshot does not list gets its
// own; and targets that differ in any field get different digests.
func TestTargetDigests(t *testing.T) {
	listed := &controlplane.DeploymentTarget{Name: "web", Workload: "shop", Workspace: "retail",
		Labels: map[string]string{"tier": "frontend", "region": "eu"}, Manifests: map[string]string{"repo": "r", "path": "./web"}}
	rr := NewRenderer(&controlplane.Snapshot{Environment: "dev", DeploymentTargets: []*controlplane.DeploymentTarget{listed}}, &schedule.Result{}, Options{})
	if _, ok := rr.r.targets[listed]; !ok {
		t.Fatal("the snapshot's target was not digested when the renderer was made")
	}
	twin := *listed // the same fields, not in the snapshot
	if got, want := string(rr.r.targetDigest(&twin)), string(rr.r.targetDigest(listed)); got != want {
		t.Error("a target the snapshot does not list got another digest than its listed twin")
	}
	for name, change := range map[string]func(*controlplane.DeploymentTarget){
		"name":      func(dt *controlplane.DeploymentTarget) { dt.Name = "api" },
		"workload":  func(dt *controlplane.DeploymentTarget) { dt.Workload = "cart" },
		"workspace": func(dt *controlplane.DeploymentTarget) { dt.Workspace = "ops" },
		"label": func(dt *controlplane.DeploymentTarget) {
			dt.Labels = map[string]string{"tier": "backend", "region": "eu"}
		},
		"manifests": func(dt *controlplane.DeploymentTarget) { dt.Manifests = map[string]string{"repo": "r", "path": "./v2"} },
	} {
		other := *listed
		change(&other)
		if string(rr.r.targetDigest(&other)) == string(rr.r.targetDigest(listed)) {
			t.Errorf("a target with another %s got the same digest", name)
		}
	}
}
