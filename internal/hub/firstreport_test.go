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

// desiredCounter counts the desired-state reads of write transactions, by revision.
type desiredCounter struct {
	hub.Store
	emptyRevision atomic.Int64
}

func (s *desiredCounter) Update(ctx context.Context, fn func(hub.Tx) error) error {
	return s.Store.Update(ctx, func(tx hub.Tx) error { return fn(countingTx{Tx: tx, s: s}) })
}

type countingTx struct {
	hub.Tx
	s *desiredCounter
}

func (t countingTx) Desired(ctx context.Context, env, revision string) (hub.Desired, error) {
	if revision == "" {
		t.s.emptyRevision.Add(1)
	}
	return t.Tx.Desired(ctx, env, revision)
}

// TestFirstReportReadsNoDesiredStateOfTheEmptyRevision: a cluster that never reported has no
// revision; its first report must not ask the store for a desired state at "" (a round trip
// per first report on PostgreSQL, inside the writer's transaction).
func TestFirstReportReadsNoDesiredStateOfTheEmptyRevision(t *testing.T) {
	ctx := context.Background()
	store, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "hub.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = store.Close() })
	counter := &desiredCounter{Store: store}
	h := hub.New(counter, hub.Options{SweepEvery: -1})
	storetest.RunHub(t, h)
	if _, err := h.RegisterCluster(ctx, hub.Cluster{Name: "c1", Environment: "dev", ClusterType: "x"}, false); err != nil {
		t.Fatal(err)
	}
	if err := h.PostDesired(ctx, hub.Desired{Environment: "dev", Revision: "r1",
		Assignments: []hub.DesiredAssignment{{Workload: "w", DeploymentTarget: "w-x", ClusterType: "x"}}}); err != nil {
		t.Fatal(err)
	}
	r := hub.Report{Cluster: "c1", Revision: "r1", Status: hub.Compliant, ObservedAt: time.Now(),
		Deployments: []hub.DeploymentReport{{DeploymentTarget: "w-x", Status: hub.Ready}}}
	if err := h.Report(ctx, hub.Principal{Kind: hub.TokenCluster, Cluster: "c1"}, r); err != nil {
		t.Fatal(err)
	}
	if n := counter.emptyRevision.Load(); n != 0 {
		t.Errorf("the first report read the desired state of the empty revision %d time(s)", n)
	}
	ro, err := h.Rollout(ctx, "dev")
	if err != nil || len(ro.Targets) != 1 || ro.Targets[0].Compliant != 1 {
		t.Errorf("rollout after the first report: %+v, %v; want 1 compliant", ro, err)
	}
}
