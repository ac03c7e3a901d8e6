package postgres_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/fleetform/fleetform/internal/hub"
	"github.com/fleetform/fleetform/internal/testutil/pgtest"
)

// TestTouchesAndUpdatesKeepTheirOrder: heartbeat times are sent as one statement later than
// they were recorded; a full row update in between must neither be undone by an older touch
// nor hide a newer one, and a read in the same transaction sees them.
func TestTouchesAndUpdatesKeepTheirOrder(t *testing.T) {
	t.Parallel()
	s := open(t, pgtest.NewDatabase(t))
	ctx := context.Background()
	t0 := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	err := s.Update(ctx, func(tx hub.Tx) error {
		for _, n := range []string{"a", "b", "c"} {
			if err := tx.InsertClusters(ctx, hub.ClusterRecord{Cluster: hub.Cluster{Name: n, Environment: "dev", ClusterType: "x"}}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	err = s.Update(ctx, func(tx hub.Tx) error {
		if _, err := tx.LockClusters(ctx, []string{"a", "b", "c", "missing"}); err != nil {
			return err
		}
		// a: touched, then updated with newer times and a status: the update wins.
		if err := tx.TouchCluster(ctx, "a", at(1), at(1)); err != nil {
			return err
		}
		a, err := tx.LockCluster(ctx, "a")
		if err != nil {
			return err
		}
		a.Status, a.ObservedAt, a.ReceivedAt = hub.Compliant, at(2), at(2)
		if err := tx.UpdateCluster(ctx, a); err != nil {
			return err
		}
		// b: updated, then touched later: the touch wins.
		b, err := tx.LockCluster(ctx, "b")
		if err != nil {
			return err
		}
		b.Status, b.ObservedAt = hub.Progressing, at(3)
		if err := tx.UpdateCluster(ctx, b); err != nil {
			return err
		}
		if err := tx.TouchCluster(ctx, "b", at(4), at(4)); err != nil {
			return err
		}
		// c: touched twice: the latest wins, and a read in the transaction sees it.
		if err := tx.TouchCluster(ctx, "c", at(5), at(5)); err != nil {
			return err
		}
		if err := tx.TouchCluster(ctx, "c", at(6), at(6)); err != nil {
			return err
		}
		cs, err := tx.Clusters(ctx, "dev")
		if err != nil {
			return err
		}
		if len(cs) != 3 || !cs[2].ObservedAt.Equal(at(6)) {
			t.Errorf("inside the transaction c is %+v, want observed at %v", cs[2], at(6))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]struct {
		status   hub.ClusterStatus
		observed time.Time
	}{"a": {hub.Compliant, at(2)}, "b": {hub.Progressing, at(4)}, "c": {"", at(6)}}
	err = s.View(ctx, func(r hub.Reader) error {
		for name, w := range want {
			c, err := r.Cluster(ctx, name)
			if err != nil {
				return err
			}
			if c.Status != w.status || !c.ObservedAt.Equal(w.observed) {
				t.Errorf("%s: status %q observed %v, want %q at %v", name, c.Status, c.ObservedAt, w.status, w.observed)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestHeartbeatsLockTheWholeBatch: recording a batch's heartbeats without reading their
// clusters locks every cluster of the batch, the others too, in the one order every writer
// locks clusters in: the batch's other clusters, locked later, would otherwise be locked
// after clusters that sort after them, and two writers could deadlock.
func TestHeartbeatsLockTheWholeBatch(t *testing.T) {
	t.Parallel()
	dsn := pgtest.NewDatabase(t)
	s := open(t, dsn)
	ctx := context.Background()
	err := s.Update(ctx, func(tx hub.Tx) error {
		for _, n := range []string{"a", "b"} {
			if err := tx.InsertClusters(ctx, hub.ClusterRecord{Cluster: hub.Cluster{Name: n, Environment: "dev", ClusterType: "x"}}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	other, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = other.Close(ctx) })
	now := time.Now()
	err = s.Update(ctx, func(tx hub.Tx) error {
		toucher := tx.(interface {
			TouchUnchanged(context.Context, []string, []hub.Heartbeat) ([]bool, error)
		})
		done, err := toucher.TouchUnchanged(ctx, []string{"a", "b"},
			[]hub.Heartbeat{{Cluster: "a", Digest: "d", ObservedAt: now, ReceivedAt: now, SkewLimit: now}})
		if err != nil {
			return err
		}
		if len(done) != 1 || done[0] {
			t.Errorf("a, never reported, was recorded as a heartbeat: %v", done)
		}
		_, err = other.Exec(ctx, `SELECT name FROM clusters WHERE name = 'b' FOR UPDATE NOWAIT`)
		var pgErr *pgconn.PgError
		if !errors.As(err, &pgErr) || pgErr.Code != "55P03" {
			t.Errorf("locking b from another transaction: %v, want it locked already (55P03)", err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
