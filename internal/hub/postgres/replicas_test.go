package postgres_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/fleetform/fleetform/internal/hub"
	"github.com/fleetform/fleetform/internal/hub/postgres"
	"github.com/fleetform/fleetform/internal/testutil/pgtest"
)

// TestMigrationsConcurrently opens the same empty database from several replicas at once.
func TestMigrationsConcurrently(t *testing.T) {
	t.Parallel()
	dsn := pgtest.NewDatabase(t)
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for range 4 {
		wg.Go(func() {
			s, err := postgres.Open(context.Background(), dsn, nil)
			if err == nil {
				err = s.Close()
			}
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	conn, err := pgx.Connect(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = conn.Close(context.Background()) }()
	var applied int
	if err := conn.QueryRow(context.Background(), `SELECT count(*) FROM schema_migrations`).Scan(&applied); err != nil {
		t.Fatal(err)
	}
	if want := postgres.MigrationCount(t); applied != want {
		t.Fatalf("%d migrations recorded, want %d", applied, want)
	}
}

// TestDeadlockIsRetried has two transactions lock two clusters in opposite orders: PostgreSQL
// aborts one, and Update runs it again.
func TestDeadlockIsRetried(t *testing.T) {
	t.Parallel()
	s := open(t, pgtest.NewDatabase(t))
	ctx := context.Background()
	err := s.Update(ctx, func(tx hub.Tx) error {
		for _, name := range []string{"a", "b"} {
			if err := tx.InsertClusters(ctx, hub.ClusterRecord{Cluster: hub.Cluster{Name: name, Environment: "dev", ClusterType: "x"}}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var attempts atomic.Int32
	var locked sync.WaitGroup
	locked.Add(2)
	lockBoth := func(first, second string) func(hub.Tx) error {
		firstAttempt := true
		return func(tx hub.Tx) error {
			attempts.Add(1)
			if _, err := tx.LockCluster(ctx, first); err != nil {
				return err
			}
			if firstAttempt {
				firstAttempt = false
				locked.Done()
				locked.Wait() // both hold their first row
			}
			c, err := tx.LockCluster(ctx, second)
			if err != nil {
				return err
			}
			c.Message = "locked by " + first
			return tx.UpdateCluster(ctx, c)
		}
	}
	var wg sync.WaitGroup
	errs := make([]error, 2)
	wg.Go(func() { errs[0] = s.Update(ctx, lockBoth("a", "b")) })
	wg.Go(func() { errs[1] = s.Update(ctx, lockBoth("b", "a")) })
	wg.Wait()
	if errs[0] != nil || errs[1] != nil {
		t.Fatalf("updates: %v, %v", errs[0], errs[1])
	}
	// At least one retry: the victim of the deadlock is made again. It may deadlock once more
	// (its new transaction can take its first row again before the survivor, woken by the
	// victim's abort, takes it), so more attempts are correct too; both updates succeed.
	if n := attempts.Load(); n < 3 {
		t.Fatalf("%d attempts, want at least 3 (a retry after the deadlock)", n)
	}
}

// TestReplicas runs three hubs on one database: clusters report through all of them while a
// new desired revision is posted; the rollout counts every cluster exactly once.
func TestReplicas(t *testing.T) {
	t.Parallel()
	dsn := pgtest.NewDatabase(t)
	ctx, cancel := context.WithCancel(context.Background())
	var running sync.WaitGroup
	t.Cleanup(func() { cancel(); running.Wait() })
	var hubs []*hub.Hub
	for range 3 {
		h := hub.New(open(t, dsn), hub.Options{Writers: 2, MaxBatch: 16})
		running.Go(func() { _ = h.Run(ctx) })
		hubs = append(hubs, h)
	}
	const clusters, rounds, types = 60, 5, 3
	var assignments []hub.DesiredAssignment
	for i := range types {
		assignments = append(assignments, hub.DesiredAssignment{Workload: "shop", DeploymentTarget: "web", ClusterType: fmt.Sprintf("t%d", i)})
	}
	for i := range clusters {
		if _, err := hubs[i%3].RegisterCluster(ctx, hub.Cluster{Name: fmt.Sprintf("c%02d", i), Environment: "dev",
			ClusterType: fmt.Sprintf("t%d", i%types)}, false); err != nil {
			t.Fatal(err)
		}
	}
	if err := hubs[0].PostDesired(ctx, hub.Desired{Environment: "dev", Revision: "r1", Assignments: assignments}); err != nil {
		t.Fatal(err)
	}
	base := time.Now().Add(-time.Minute)
	var wg sync.WaitGroup
	errs := make(chan error, clusters*rounds+1)
	wg.Go(func() {
		time.Sleep(20 * time.Millisecond)
		errs <- hubs[1].PostDesired(ctx, hub.Desired{Environment: "dev", Revision: "r2", Assignments: assignments})
	})
	for i := range clusters {
		wg.Go(func() {
			for round := range rounds {
				rev, status := "r1", hub.Ready
				if round == rounds-1 || (i+round)%2 == 0 {
					rev = "r2"
				}
				if (i+round)%3 == 0 {
					status = hub.Failed
				}
				name := fmt.Sprintf("c%02d", i)
				errs <- hubs[(i+round)%3].Report(ctx, hub.Principal{Kind: hub.TokenCluster, Cluster: name}, hub.Report{
					Cluster: name, Revision: rev, Status: hub.Compliant, ObservedAt: base.Add(time.Duration(round) * time.Second),
					Deployments: []hub.DeploymentReport{{DeploymentTarget: "web", Status: status}}})
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	r, err := hubs[2].Rollout(ctx, "dev")
	if err != nil {
		t.Fatal(err)
	}
	failed := 0
	for i := range clusters {
		if (i+rounds-1)%3 == 0 {
			failed++
		}
	}
	var total hub.TargetRollout
	for _, tr := range r.Targets {
		total.Clusters += tr.Clusters
		total.Compliant += tr.Compliant
		total.Failed += tr.Failed
		total.Progressing += tr.Progressing
		total.Unknown += tr.Unknown
	}
	want := hub.TargetRollout{Clusters: clusters, Compliant: clusters - failed, Failed: failed}
	if r.Revision != "r2" || total != want {
		t.Fatalf("rollout of %s: %+v, want %+v", r.Revision, total, want)
	}
}

// TestBootstrapConcurrently starts four replicas on one new database without an admin token
// in the environment: exactly one generates the admin token.
func TestBootstrapConcurrently(t *testing.T) {
	t.Parallel()
	dsn := pgtest.NewDatabase(t)
	open(t, dsn) // migrated before the race
	var wg sync.WaitGroup
	var generated atomic.Int32
	errs := make(chan error, 4)
	for range 4 {
		wg.Go(func() {
			tok, err := hub.New(open(t, dsn), hub.Options{}).Bootstrap(context.Background(), "")
			if tok != "" {
				generated.Add(1)
			}
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if n := generated.Load(); n != 1 {
		t.Fatalf("%d replicas generated an admin token, want 1", n)
	}
}
