package render

import (
	"testing"

	"github.com/fleetform/fleetform/internal/platform"
	"github.com/fleetform/fleetform/internal/schedule"
)

// TestOutputPointsAtEveryAssignment: the output made a chunk at a time points each entry
// at the scheduled assignment of the same index, whatever the number of chunks.
func TestOutputPointsAtEveryAssignment(t *testing.T) {
	for _, n := range []int{0, 1, preemptChunk - 1, preemptChunk, 2*preemptChunk + 3} {
		sched := &schedule.Result{Assignments: make([]schedule.Assignment, n)}
		rr := NewRenderer(&platform.Snapshot{Environment: "dev"}, sched, Options{})
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
