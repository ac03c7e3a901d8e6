package storetest

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/fleetform/fleetform/internal/hub"
	"github.com/fleetform/fleetform/internal/hub/sqlite"
)

// RunningHub returns a hub with options opts over a new SQLite store in a temporary
// directory, its writers running until the test ends; then it is stopped and the store closed.
func RunningHub(tb testing.TB, opts hub.Options) *hub.Hub {
	tb.Helper()
	store, err := sqlite.Open(context.Background(), filepath.Join(tb.TempDir(), "hub.db"))
	if err != nil {
		tb.Fatal(err)
	}
	h := hub.New(store, opts)
	stop := RunHub(tb, h)
	tb.Cleanup(func() {
		stop()
		if err := store.Close(); err != nil {
			tb.Errorf("closing the hub's store: %v", err)
		}
	})
	return h
}

// RunHub runs h's writers in the background until stop is called or the test ends. stop
// waits for them to end and may be called more than once.
func RunHub(tb testing.TB, h *hub.Hub) (stop func()) {
	tb.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = h.Run(ctx)
	}()
	stop = func() {
		cancel()
		<-done
	}
	tb.Cleanup(stop)
	return stop
}
