package postgres_test

import (
	"context"
	"testing"

	"github.com/fleetform/fleetform/internal/hub"
	"github.com/fleetform/fleetform/internal/testutil/pgtest"
)

// TestViewReadsOneSnapshot: every read of a View sees the database as it was at its first
// read, whatever commits meanwhile; the connection goes back to the pool with no
// transaction open, so the next View sees the commit; and a View with no read sends nothing.
func TestViewReadsOneSnapshot(t *testing.T) {
	t.Parallel()
	s := open(t, pgtest.NewDatabase(t))
	ctx := context.Background()
	insert := func(name string) {
		t.Helper()
		if err := s.Update(ctx, func(tx hub.Tx) error {
			return tx.InsertClusters(ctx, hub.ClusterRecord{Cluster: hub.Cluster{Name: name, Environment: "dev", ClusterType: "x"}})
		}); err != nil {
			t.Fatal(err)
		}
	}
	count := func(r hub.Reader) int {
		t.Helper()
		cs, err := r.Clusters(ctx, "")
		if err != nil {
			t.Fatal(err)
		}
		return len(cs)
	}
	insert("a")
	err := s.View(ctx, func(r hub.Reader) error {
		before := count(r)
		insert("b") // committed by another connection while the view is open
		if after := count(r); after != before {
			t.Errorf("a view saw %d clusters, then %d: not one snapshot", before, after)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for range 3 { // more views than one connection's worth: each ends its transaction
		if err := s.View(ctx, func(r hub.Reader) error {
			if n := count(r); n != 2 {
				t.Errorf("a view after the commit saw %d clusters, want 2", n)
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.View(ctx, func(hub.Reader) error { return nil }); err != nil {
		t.Errorf("a view with no read: %v", err)
	}
}
