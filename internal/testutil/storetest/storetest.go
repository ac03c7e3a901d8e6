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
	return startWith(t, store, c, hub.Options{})
}

// startWith is start with options: those the suite always sets are set over opts.
func startWith(t *testing.T, store hub.Store, c *clock, opts hub.Options) *env {
	t.Helper()
	opts.Now, opts.StaleAfter, opts.Writers, opts.MaxBatch, opts.SweepEvery = c.Now, 10*time.Minute, 2, 64, -1
	h := hub.New(store, opts)
	return &env{t: t, hub: h, store: store, clock: c, stop: RunHub(t, h)}
}

// Run runs the whole suite; explain gives the store's query plans (see Explainer).
func Run(t *testing.T, open Opener, explain Explainer) {
	t.Helper()
	s := suite{open: open, explain: explain}
	t.Run("Tokens", s.testTokens)
	t.Run("AdminTokenReplaced", s.testAdminTokenReplaced)
	t.Run("TokenLifecycle", s.testTokenLifecycle)
	t.Run("RevocationOnReplicas", s.testRevocationOnReplicas)
	t.Run("Registration", s.testRegistration)
	t.Run("RegisterBatch", s.testRegisterBatch)
	t.Run("InsertMany", s.testInsertMany)
	t.Run("Desired", s.testDesired)
	t.Run("RolloutStates", s.testRolloutStates)
	t.Run("OrderAndDuplicates", s.testOrder)
	t.Run("DesiredAfterReports", s.testDesiredAfterReports)
	t.Run("Staleness", s.testStaleness)
	t.Run("HistoryDiffDrift", s.testHistoryDiffDrift)
	t.Run("Restart", s.testRestart)
	t.Run("ConcurrentWriters", s.testConcurrent)
	t.Run("Prune", s.testPrune)
	t.Run("Promotion", s.testPromotion)
	t.Run("Audit", s.testAudit)
	t.Run("Authoring", s.testAuthoring)
	t.Run("RandomOperations", s.testRandom)
	t.Run("LargeHistory", s.testLargeHistory)
	t.Run("FutureObservedAt", s.testFutureObservedAt)
	t.Run("BatchReads", s.testBatchReads)
	t.Run("Touches", s.testTouches)
	t.Run("Environments", s.testEnvironments)
	t.Run("Sources", s.testSources)
	t.Run("Syncs", s.testSyncs)
	t.Run("SyncHistoryBound", s.testSyncHistoryBound)
	t.Run("ClusterPage", s.testClusterPage)
	t.Run("SearchClusters", s.testSearchClusters)
}

// suite holds what every scenario needs: each scenario is a method, run as a subtest.
type suite struct {
	open    Opener
	explain Explainer
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

// devRollout is the rollout of environment dev (the one the scenarios check), keyed by
// cluster type and deployment target.
func (e *env) devRollout() map[string]hub.TargetRollout {
	e.t.Helper()
	r, err := e.hub.Rollout(context.Background(), "dev")
	if err != nil {
		e.t.Fatalf("rollout dev: %v", err)
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
