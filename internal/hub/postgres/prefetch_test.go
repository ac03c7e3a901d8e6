package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/fleetform/fleetform/internal/hub"
	"github.com/fleetform/fleetform/internal/testutil/pgtest"
)

// TestPrefetchedDeploymentsStayCurrent: deployments read ahead for several clusters are what
// Deployments returns (none for a cluster without any), and a cluster's deployments written
// later in the transaction are read back, not the read-ahead.
func TestPrefetchedDeploymentsStayCurrent(t *testing.T) {
	t.Parallel()
	s := open(t, pgtest.NewDatabase(t))
	ctx := context.Background()
	since := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	web := hub.DeploymentState{DeploymentTarget: "web", Namespace: "shop", Status: hub.Ready, Revision: "v1", Since: since}
	err := s.Update(ctx, func(tx hub.Tx) error {
		for _, n := range []string{"a", "b"} {
			if err := tx.InsertClusters(ctx, hub.ClusterRecord{Cluster: hub.Cluster{Name: n, Environment: "dev", ClusterType: "x"}}); err != nil {
				return err
			}
		}
		return tx.SetDeployments(ctx, "a", []hub.DeploymentState{web}, nil)
	})
	if err != nil {
		t.Fatal(err)
	}
	failed := web
	failed.Status = hub.Failed
	err = s.Update(ctx, func(tx hub.Tx) error {
		if _, err := tx.LockClusters(ctx, []string{"a", "b"}); err != nil {
			return err
		}
		if err := tx.PrefetchDeployments(ctx, []string{"a", "b"}); err != nil {
			return err
		}
		a, err := tx.Deployments(ctx, "a")
		if err != nil {
			return err
		}
		if len(a) != 1 || a[0] != web {
			t.Errorf("a's prefetched deployments are %+v, want [%+v]", a, web)
		}
		if b, err := tx.Deployments(ctx, "b"); err != nil || len(b) != 0 {
			t.Errorf("b's prefetched deployments are %+v (%v), want none", b, err)
		}
		if err := tx.SetDeployments(ctx, "a", []hub.DeploymentState{failed}, nil); err != nil {
			return err
		}
		a, err = tx.Deployments(ctx, "a")
		if err != nil {
			return err
		}
		if len(a) != 1 || a[0] != failed {
			t.Errorf("after SetDeployments, a's deployments are %+v, want [%+v]", a, failed)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestPendingRowsKeepTheLastWrite: rows written several times in one transaction are sent
// merged, as their last write; a read in the transaction sees them, and so does a later one.
func TestPendingRowsKeepTheLastWrite(t *testing.T) {
	t.Parallel()
	s := open(t, pgtest.NewDatabase(t))
	ctx := context.Background()
	at := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	dep := func(target string, status hub.DeploymentStatus) hub.DeploymentState {
		return hub.DeploymentState{DeploymentTarget: target, Namespace: "shop", Status: status, Revision: "v1", Since: at}
	}
	want := []hub.DeploymentState{dep("api", hub.Failed), dep("web", hub.Ready)}
	check := func(r hub.Reader, when string) {
		t.Helper()
		got, err := r.Deployments(ctx, "a")
		if err != nil || fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s: deployments %+v (%v), want %+v", when, got, err, want)
		}
		c, err := r.Cluster(ctx, "a")
		if err != nil || c.Status != hub.Compliant || c.Revision != "r2" || c.Labels["site"] != "b" {
			t.Errorf("%s: cluster %+v (%v), want the second update", when, c, err)
		}
		events, err := r.History(ctx, hub.HistoryFilter{Cluster: "a", Limit: 10})
		if err != nil || len(events) != 2 || events[0].To != "second" || events[1].To != "first" {
			t.Errorf("%s: events %+v (%v), want first then second", when, events, err)
		}
	}
	err := s.Update(ctx, func(tx hub.Tx) error {
		c := hub.ClusterRecord{Cluster: hub.Cluster{Name: "a", Environment: "dev", ClusterType: "x", Labels: map[string]string{"site": "a"}}}
		if err := tx.InsertClusters(ctx, c); err != nil {
			return err
		}
		writes := []struct {
			put    []hub.DeploymentState
			remove []string
		}{
			{put: []hub.DeploymentState{dep("web", hub.Failed), dep("api", hub.Ready), dep("old", hub.Ready)}},
			{remove: []string{"web", "old"}},
			{put: []hub.DeploymentState{dep("web", hub.Ready), dep("api", hub.Failed)}},
		}
		for _, w := range writes {
			if err := tx.SetDeployments(ctx, "a", w.put, w.remove); err != nil {
				return err
			}
		}
		for i, u := range []struct {
			status    hub.ClusterStatus
			rev, site string
		}{{hub.Progressing, "r1", "a"}, {hub.Compliant, "r2", "b"}} {
			c.Status, c.Revision, c.Labels = u.status, u.rev, map[string]string{"site": u.site}
			if err := tx.UpdateCluster(ctx, c); err != nil {
				return err
			}
			if err := tx.AddEvents(ctx, []hub.Event{{Time: at.Add(time.Duration(i) * time.Second), Kind: hub.EventCluster,
				Environment: "dev", ClusterType: "x", Cluster: "a", To: []string{"first", "second"}[i]}}); err != nil {
				return err
			}
		}
		check(tx, "inside the transaction")
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.View(ctx, func(r hub.Reader) error { check(r, "after the commit"); return nil }); err != nil {
		t.Fatal(err)
	}
}

// TestAbortedTransactionIsNotReportedCommitted: when a statement fails and fn goes on (and
// returns nil), PostgreSQL answers COMMIT with ROLLBACK; Update must return an error, and
// nothing is stored.
func TestAbortedTransactionIsNotReportedCommitted(t *testing.T) {
	t.Parallel()
	s := open(t, pgtest.NewDatabase(t))
	ctx := context.Background()
	hash := []byte("0123456789abcdef0123456789abcdef")
	for _, name := range []string{"failure in the same round trip as the write", "failure in a later round trip"} {
		err := s.Update(ctx, func(tx hub.Tx) error {
			if err := tx.PutTokens(ctx, hub.Token{Hash: hash, Kind: hub.TokenRead, Name: "lost"}); err != nil {
				return err
			}
			if name == "failure in a later round trip" {
				if _, err := tx.History(ctx, hub.HistoryFilter{Limit: 1}); err != nil {
					return err
				}
			}
			_, _ = tx.History(ctx, hub.HistoryFilter{Limit: -1}) // LIMIT must not be negative: the transaction aborts
			return nil
		})
		if err == nil {
			t.Errorf("%s: Update returned nil for an aborted transaction", name)
		}
		err = s.View(ctx, func(r hub.Reader) error {
			_, err := r.Token(ctx, hash)
			return err
		})
		if !errors.Is(err, hub.ErrNotFound) {
			t.Errorf("%s: the token of the aborted transaction: %v, want not found", name, err)
		}
	}
}
