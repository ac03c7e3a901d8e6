// Package parallel runs independent pieces of work on a few goroutines.
package parallel

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// Each calls fn(0) .. fn(n-1), each once, on up to workers goroutines (GOMAXPROCS when
// workers is 0 or less), and returns when every call has. The calls may run in any order.
func Each(n, workers int, fn func(i int)) {
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range max(1, min(workers, n)) {
		wg.Go(func() {
			for i := int(next.Add(1)) - 1; i < n; i = int(next.Add(1)) - 1 {
				fn(i)
			}
		})
	}
	wg.Wait()
}
