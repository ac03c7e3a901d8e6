package hub_test

import (
	"context"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fleetform/fleetform/internal/hub"
	"github.com/fleetform/fleetform/internal/hub/sqlite"
	"github.com/fleetform/fleetform/internal/testutil/storetest"
)

// TestSweepLooksAgainWhenAClusterCanGoStale: after a sweep, the loop need not look again
// before the oldest fresh cluster can go stale (StaleAfter after its report, less a minute
// for reports committed after the sweep looked); with no fresh cluster, StaleAfter after now.
func TestSweepLooksAgainWhenAClusterCanGoStale(t *testing.T) {
	ctx := context.Background()
	store, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "hub.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = store.Close() })
	t0 := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	var clock atomic.Int64 // the hub's writers read it too
	clock.Store(t0.UnixNano())
	at := func() time.Time { return time.Unix(0, clock.Load()).UTC() }
	h := hub.New(store, hub.Options{SweepEvery: -1, StaleAfter: 10 * time.Minute, Now: at})
	storetest.RunHub(t, h)
	expire := func(wantExpired int, wantDue time.Time) {
		t.Helper()
		n, due, err := h.ExpireStaleDue(ctx)
		if err != nil || n != wantExpired || !due.Equal(wantDue) {
			t.Fatalf("at %s: expired %d, next look at %s, %v; want %d, %s", at().Format(time.TimeOnly), n,
				due.Format(time.TimeOnly), err, wantExpired, wantDue.Format(time.TimeOnly))
		}
	}
	expire(0, t0.Add(9*time.Minute)) // nothing fresh
	for _, name := range []string{"c1", "c2"} {
		if _, err := h.RegisterCluster(ctx, hub.Cluster{Name: name, Environment: "dev", ClusterType: "x"}, false); err != nil {
			t.Fatal(err)
		}
	}
	report := func(name string) {
		t.Helper()
		if err := h.Report(ctx, hub.Principal{Kind: hub.TokenCluster, Cluster: name},
			hub.Report{Cluster: name, Revision: "r1", Status: hub.Compliant, ObservedAt: at()}); err != nil {
			t.Fatal(err)
		}
	}
	report("c1")
	clock.Store(t0.Add(6 * time.Minute).UnixNano())
	report("c2")
	expire(0, t0.Add(9*time.Minute)) // c1 goes stale first
	clock.Store(t0.Add(11 * time.Minute).UnixNano())
	expire(1, t0.Add(15*time.Minute)) // c1 expired; c2 reported at t0+6m
}
