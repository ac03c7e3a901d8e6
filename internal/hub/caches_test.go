package hub

import (
	"fmt"
	"sync"
	"testing"
)

// TestShardedMap: values stored from many goroutines are loaded back, deleted ones are gone,
// and a store replaces the value.
func TestShardedMap(t *testing.T) {
	m := newShardedMap[string, int]()
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for i := w; i < 1000; i += 4 {
				m.Store(fmt.Sprint(i), i)
			}
		})
	}
	wg.Wait()
	for i := range 1000 {
		if i%3 == 0 {
			m.Delete(fmt.Sprint(i))
		}
	}
	m.Store("1", -1)
	for i := range 1000 {
		v, ok := m.Load(fmt.Sprint(i))
		want := i
		if i == 1 {
			want = -1
		}
		switch {
		case i%3 == 0 && ok:
			t.Errorf("%d: still there after Delete (%d)", i, v)
		case i%3 != 0 && (!ok || v != want):
			t.Errorf("%d: Load = %d, %v; want %d", i, v, ok, want)
		}
	}
	if _, ok := m.Load("missing"); ok {
		t.Error("a key never stored was found")
	}
}
