package parallel_test

import (
	"sync/atomic"
	"testing"

	"github.com/fleetform/fleetform/internal/parallel"
)

// TestEach: every index is done exactly once, whatever the number of workers, and never
// more goroutines at once than asked for.
func TestEach(t *testing.T) {
	for _, c := range []struct{ n, workers int }{{0, 0}, {1, 4}, {100, 0}, {100, 1}, {100, 3}, {3, 100}} {
		calls := make([]atomic.Int32, c.n)
		var running, most atomic.Int32
		parallel.Each(c.n, c.workers, func(i int) {
			now := running.Add(1)
			for m := most.Load(); now > m && !most.CompareAndSwap(m, now); m = most.Load() {
			}
			calls[i].Add(1)
			running.Add(-1)
		})
		for i := range calls {
			if got := calls[i].Load(); got != 1 {
				t.Errorf("n %d, workers %d: index %d done %d times", c.n, c.workers, i, got)
			}
		}
		if c.workers > 0 && int(most.Load()) > c.workers {
			t.Errorf("n %d, workers %d: %d at once", c.n, c.workers, most.Load())
		}
	}
}
