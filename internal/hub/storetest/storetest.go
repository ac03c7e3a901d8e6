// Package storetest is the conformance suite every hub store passes: the same scenarios,
// through the hub's service, against SQLite and PostgreSQL.
package storetest

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/fleetform/fleetform/internal/hub"
)

// Opener returns an empty store; reopen returns a new Store on the same data (a restart).
type Opener func(t *testing.T) (store hub.Store, reopen func() hub.Store)

// clock is a settable clock for the hub.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func newClock() *clock { return &clock{now: time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// env is a running hub over a store, for one test.
type env struct {
	t     *testing.T
	hub   *hub.Hub
	store hub.Store
	clock *clock
	stop  func()
}

func start(t *testing.T, store hub.Store, c *clock) *env {
	t.Helper()
	h := hub.New(store, hub.Options{Now: c.Now, StaleAfter: 10 * time.Minute, Writers: 2, MaxBatch: 64})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = h.Run(ctx)
	}()
	e := &env{t: t, hub: h, store: store, clock: c, stop: func() { cancel(); <-done }}
	t.Cleanup(e.stop)
	return e
}

// Run runs the whole suite.
func Run(t *testing.T, open Opener) {
	t.Run("Tokens", func(t *testing.T) { testTokens(t, open) })
	t.Run("Registration", func(t *testing.T) { testRegistration(t, open) })
	t.Run("Desired", func(t *testing.T) { testDesired(t, open) })
	t.Run("RolloutStates", func(t *testing.T) { testRolloutStates(t, open) })
	t.Run("OrderAndDuplicates", func(t *testing.T) { testOrder(t, open) })
	t.Run("DesiredAfterReports", func(t *testing.T) { testDesiredAfterReports(t, open) })
	t.Run("Staleness", func(t *testing.T) { testStaleness(t, open) })
	t.Run("HistoryDiffDrift", func(t *testing.T) { testHistoryDiffDrift(t, open) })
	t.Run("Restart", func(t *testing.T) { testRestart(t, open) })
	t.Run("ConcurrentWriters", func(t *testing.T) { testConcurrent(t, open) })
	t.Run("Prune", func(t *testing.T) { testPrune(t, open) })
	t.Run("Promotion", func(t *testing.T) { testPromotion(t, open) })
	t.Run("RandomOperations", func(t *testing.T) { testRandom(t, open) })
}

func (e *env) register(name, environment, clusterType string) string {
	e.t.Helper()
	tok, err := e.hub.RegisterCluster(context.Background(), hub.Cluster{Name: name, Environment: environment, ClusterType: clusterType}, false)
	if err != nil {
		e.t.Fatalf("register %s: %v", name, err)
	}
	return tok
}

func (e *env) report(r hub.Report) error {
	e.t.Helper()
	if r.ObservedAt.IsZero() {
		r.ObservedAt = e.clock.Now()
	}
	return e.hub.Report(context.Background(), hub.Principal{Kind: hub.TokenCluster, Cluster: r.Cluster}, r)
}

func (e *env) mustReport(r hub.Report) {
	e.t.Helper()
	if err := e.report(r); err != nil {
		e.t.Fatalf("report %s: %v", r.Cluster, err)
	}
}

func (e *env) desired(environment, revision string, assignments ...hub.DesiredAssignment) {
	e.t.Helper()
	if err := e.hub.PostDesired(context.Background(), hub.Desired{Environment: environment, Revision: revision, Assignments: assignments}); err != nil {
		e.t.Fatalf("post desired %s@%s: %v", environment, revision, err)
	}
}

func (e *env) rollout(environment string) map[string]hub.TargetRollout {
	e.t.Helper()
	r, err := e.hub.Rollout(context.Background(), environment)
	if err != nil {
		e.t.Fatalf("rollout %s: %v", environment, err)
	}
	out := map[string]hub.TargetRollout{}
	for _, t := range r.Targets {
		out[t.ClusterType+"/"+t.DeploymentTarget] = t
	}
	return out
}

func assign(workload, dt, ct string) hub.DesiredAssignment {
	return hub.DesiredAssignment{Workload: workload, DeploymentTarget: dt, ClusterType: ct, Namespace: "ns-" + dt,
		Manifests: map[string]string{"repo": "https://example.com/" + workload, "branch": "main", "path": "./" + dt}}
}

func dep(dt string, s hub.DeploymentStatus) hub.DeploymentReport {
	return hub.DeploymentReport{DeploymentTarget: dt, Namespace: "ns-" + dt, Status: s, Revision: "app-1"}
}

func code(err error) hub.Code {
	if err == nil {
		return ""
	}
	return hub.ErrorCode(err)
}

func isNotFound(err error) bool { return errors.Is(err, hub.ErrNotFound) }
