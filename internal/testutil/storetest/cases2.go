package storetest

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"reflect"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fleetform/fleetform/internal/hub"
)

func (s suite) testHistoryDiffDrift(t *testing.T) {
	store, _ := s.open(t)
	e := start(t, store, newClock())
	historyFixture(t, e)
	checkHistory(t, e)
	checkDiff(t, e)
	checkDrift(t, e)
}

// historyFixture registers a dev cluster and two prod ones, posts differing desired states
// and workload versions, and has d1 go from Ready to Failed and p1 report an old revision.
func historyFixture(t *testing.T, e *env) {
	t.Helper()
	e.register("d1", "dev", "large")
	e.register("p1", "prod", "large")
	e.register("p2", "prod", "large")
	dev := assign("shop", "shop-web", "large")
	dev.Config = map[string]any{"REPLICAS": "1", "REGION": "west"}
	prod := assign("shop", "shop-web", "large")
	prod.Config = map[string]any{"REPLICAS": "3", "REGION": "west"}
	e.desired("dev", "r1", dev, assign("billing", "billing-api", "large"))
	e.desired("prod", "r7", prod)
	for _, v := range []hub.WorkloadVersion{{Environment: "dev", Workload: "shop", DeploymentTarget: "shop-web", Version: "1.2.0"},
		{Environment: "prod", Workload: "shop", DeploymentTarget: "shop-web", Version: "1.1.0"}} {
		if err := e.hub.PostWorkloadVersion(context.Background(), v); err != nil {
			t.Fatal(err)
		}
	}
	e.mustReport(hub.Report{Cluster: "d1", Revision: "r1", Status: hub.Compliant, Deployments: []hub.DeploymentReport{dep("shop-web", hub.Ready)}})
	e.clock.Advance(time.Minute)
	e.mustReport(hub.Report{Cluster: "d1", Revision: "r1", Status: hub.NonCompliant, Deployments: []hub.DeploymentReport{dep("shop-web", hub.Failed)}})
	e.mustReport(hub.Report{Cluster: "p1", Revision: "r6", Status: hub.Compliant, GitOpsPath: "./small"})
}

// checkHistory checks the history of historyFixture: per workload, per environment and since a time.
func checkHistory(t *testing.T, e *env) {
	t.Helper()
	ctx := context.Background()
	events, err := e.hub.History(ctx, hub.HistoryFilter{Environment: "dev", Workload: "shop"})
	if err != nil {
		t.Fatal(err)
	}
	var transitions []string
	for _, ev := range events {
		transitions = append(transitions, ev.Kind+":"+ev.From+"->"+ev.To)
	}
	if diff := cmp.Diff([]string{"deployment:Ready->Failed", "deployment:->Ready"}, transitions); diff != "" {
		t.Errorf("shop's history in dev (-want +got):\n%s", diff)
	}
	all, err := e.hub.History(ctx, hub.HistoryFilter{Environment: "dev"})
	if err != nil || len(all) < 5 { // registration, desired, 2 cluster transitions, 2 deployment transitions
		t.Errorf("dev history: %d events, %v", len(all), err)
	}
	since, _ := e.hub.History(ctx, hub.HistoryFilter{Environment: "dev", Since: e.clock.Now()})
	if len(since) != 2 {
		t.Errorf("events since the last minute: %+v", since)
	}
}

// checkDiff checks the diff of dev and prod in historyFixture: billing is only in dev, shop
// differs in one config key and in its versions.
func checkDiff(t *testing.T, e *env) {
	t.Helper()
	diff, err := e.hub.Diff(context.Background(), "dev", "prod")
	if err != nil {
		t.Fatal(err)
	}
	if len(diff.Workloads) != 2 || diff.Workloads[0].Workload != "billing" || diff.Workloads[1].Workload != "shop" {
		t.Fatalf("diff workloads %+v", diff.Workloads)
	}
	shop := diff.Workloads[1]
	if shop.Same || len(shop.Config) != 1 || shop.Config[0].Key != "REPLICAS" || shop.From.Versions["shop-web"] != "1.2.0" ||
		shop.To.Versions["shop-web"] != "1.1.0" {
		t.Errorf("shop diff %+v", shop)
	}
	if billing := diff.Workloads[0]; len(billing.To.DeploymentTargets) != 0 || len(billing.From.DeploymentTargets) != 1 {
		t.Errorf("billing is only in dev: %+v", billing)
	}
}

// checkDrift checks the drift of historyFixture: in prod p1 is behind on the wrong path and
// p2 silent; in dev shop-web fails on d1.
func checkDrift(t *testing.T, e *env) {
	t.Helper()
	ctx := context.Background()
	e.clock.Advance(30 * time.Minute)
	e.mustReport(hub.Report{Cluster: "p1", Revision: "r6", Status: hub.Compliant, GitOpsPath: "./small"})
	drift, err := e.hub.Drift(ctx, "prod", 15*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if len(drift.Behind) != 1 || drift.Behind[0].Name != "p1" || len(drift.Silent) != 1 || drift.Silent[0].Name != "p2" ||
		len(drift.WrongPath) != 1 || drift.Revision != "r7" {
		t.Errorf("prod drift %+v", drift)
	}
	sameDrift(t, e, "prod", 15*time.Minute, drift)
	e.clock.Advance(-20 * time.Minute) // d1's last report must be fresh
	devDrift, err := e.hub.Drift(ctx, "dev", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if len(devDrift.Failing) != 1 || devDrift.Failing[0].DeploymentTarget != "shop-web" || len(devDrift.FailingClusters) != 1 {
		t.Errorf("dev drift %+v", devDrift)
	}
	sameDrift(t, e, "dev", time.Hour, devDrift)
}

// sameDrift checks that the store's drift counts say what Drift lists.
func sameDrift(t *testing.T, e *env, environment string, behind time.Duration, d hub.Drift) {
	t.Helper()
	got, err := e.hub.DriftSummary(context.Background(), environment, behind, 10)
	if err != nil {
		t.Fatal(err)
	}
	names := func(cs []hub.ClusterRecord) []string {
		out := []string{}
		for _, c := range cs {
			out = append(out, c.Name)
		}
		return out
	}
	failing := map[string]bool{}
	for _, f := range d.Failing {
		failing[f.Cluster] = true
	}
	for _, c := range d.FailingClusters {
		failing[c.Name] = true
	}
	want := hub.DriftCounts{Silent: hub.NamedCount{Count: len(d.Silent), First: names(d.Silent)},
		Behind:    hub.NamedCount{Count: len(d.Behind), First: names(d.Behind)},
		Failing:   hub.NamedCount{Count: len(failing), First: slices.Sorted(maps.Keys(failing))},
		WrongPath: hub.NamedCount{Count: len(d.WrongPath), First: names(d.WrongPath)}}
	if want.Failing.First == nil {
		want.Failing.First = []string{}
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s: drift counts %+v, Drift says %+v", environment, got, want)
	}
}

func (s suite) testRestart(t *testing.T) {
	store, reopen := s.open(t)
	c := newClock()
	e := start(t, store, c)
	tok := e.register("c1", "dev", "large")
	e.desired("dev", "r1", assign("shop", "shop-web", "large"))
	e.mustReport(hub.Report{Cluster: "c1", Revision: "r1", Status: hub.Compliant})
	e.stop()
	if err := store.Close(); err != nil {
		t.Fatal(err)
	}
	e2 := start(t, reopen(), c)
	if p, err := e2.hub.Authenticate(context.Background(), tok); err != nil || p.Cluster != "c1" {
		t.Fatalf("token after restart: %+v, %v", p, err)
	}
	if r := e2.devRollout()["large/shop-web"]; r.Compliant != 1 || r.Clusters != 1 {
		t.Fatalf("rollout after restart: %+v", r)
	}
}

// testConcurrent has many clusters report at once, several times each: every report is
// accepted and counted exactly once.
func (s suite) testConcurrent(t *testing.T) {
	store, _ := s.open(t)
	e := start(t, store, newClock())
	const clusters, rounds = 40, 5
	for i := range clusters {
		e.register(fmt.Sprintf("c%02d", i), "dev", fmt.Sprintf("t%d", i%4))
	}
	var as []hub.DesiredAssignment
	for i := range 4 {
		as = append(as, assign("shop", "shop-web", fmt.Sprintf("t%d", i)))
	}
	e.desired("dev", "r1", as...)
	base := e.clock.Now()
	var wg sync.WaitGroup
	errs := make(chan error, clusters*rounds)
	for i := range clusters {
		wg.Go(func() {
			for round := range rounds {
				st := hub.Ready
				if (i+round)%3 == 0 {
					st = hub.Failed
				}
				errs <- e.report(hub.Report{Cluster: fmt.Sprintf("c%02d", i), Revision: "r1", Status: hub.Compliant,
					ObservedAt: base.Add(time.Duration(round+1) * time.Second), Deployments: []hub.DeploymentReport{dep("shop-web", st)}})
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
	failed := 0
	for i := range clusters {
		if (i+rounds-1)%3 == 0 {
			failed++
		}
	}
	total := hub.TargetRollout{}
	for _, r := range e.devRollout() {
		total.Clusters += r.Clusters
		total.Compliant += r.Compliant
		total.Failed += r.Failed
		total.Progressing += r.Progressing
		total.Unknown += r.Unknown
	}
	if total.Clusters != clusters || total.Failed != failed || total.Compliant != clusters-failed || total.Progressing+total.Unknown != 0 {
		t.Fatalf("after concurrent reports: %+v, want %d failed of %d", total, failed, clusters)
	}
}

func (s suite) testPrune(t *testing.T) {
	store, _ := s.open(t)
	e := start(t, store, newClock())
	e.register("c1", "dev", "large")
	e.desired("dev", "r1", assign("shop", "shop-web", "large"))
	e.mustReport(hub.Report{Cluster: "c1", Revision: "r1", Status: hub.Compliant})
	e.clock.Advance(100 * 24 * time.Hour)
	e.desired("dev", "r2", assign("shop", "shop-web", "large"))
	if err := e.hub.Prune(context.Background()); err != nil {
		t.Fatal(err)
	}
	events, _ := e.hub.History(context.Background(), hub.HistoryFilter{Environment: "dev"})
	if len(events) != 1 || events[0].Revision != "r2" {
		t.Fatalf("events after pruning: %+v", events)
	}
	err := store.View(context.Background(), func(r hub.Reader) error {
		if _, err := r.Desired(context.Background(), "dev", "r1"); !isNotFound(err) {
			t.Errorf("old desired state kept: %v", err)
		}
		if _, err := r.Desired(context.Background(), "dev", "r2"); err != nil {
			t.Errorf("latest desired state pruned: %v", err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}

	// A store prunes at most its limit of events, oldest first (the hub prunes in batches).
	ctx := context.Background()
	old := e.clock.Now().Add(-200 * 24 * time.Hour)
	var evs []hub.Event
	for i := range 5 {
		evs = append(evs, hub.Event{Time: old.Add(time.Duration(4-i) * time.Minute), Kind: hub.EventRegistration,
			Environment: "prune", Cluster: fmt.Sprintf("p%d", i), Message: "registered"})
	}
	if err := store.Update(ctx, func(tx hub.Tx) error { return tx.AddEvents(ctx, evs) }); err != nil {
		t.Fatal(err)
	}
	var n int64
	err = store.Update(ctx, func(tx hub.Tx) error {
		var err error
		n, err = tx.PruneHistory(ctx, old.Add(time.Hour), 2)
		return err
	})
	left, _ := e.hub.History(ctx, hub.HistoryFilter{Environment: "prune"})
	var names []string
	for _, ev := range left {
		names = append(names, ev.Cluster)
	}
	slices.Sort(names)
	if err != nil || n != 2 || !slices.Equal(names, []string{"p0", "p1", "p2"}) {
		t.Fatalf("pruning 2 of 5 events: %d, %v; left %v, want p0, p1, p2 (the newest)", n, err, names)
	}

	// PruneDesired counts the desired states it removed: one superseded and old, then none.
	e.clock.Advance(100 * 24 * time.Hour)
	e.desired("dev", "r3", assign("shop", "shop-web", "large"))
	for _, want := range []int64{1, 0} {
		err = store.Update(ctx, func(tx hub.Tx) error {
			var err error
			n, err = tx.PruneDesired(ctx, e.clock.Now().Add(-time.Hour))
			return err
		})
		if err != nil || n != want {
			t.Fatalf("PruneDesired: %d, %v; want %d", n, err, want)
		}
	}
}

// testRandom applies random operations and checks that the counter-based rollout always
// equals a recount from the clusters' stored states.
func (s suite) testRandom(t *testing.T) {
	store, _ := s.open(t)
	e := start(t, store, newClock())
	rng := rand.New(rand.NewPCG(1, 2)) //nolint:gosec // a fixed, reproducible sequence for a test
	types := []string{"a", "b", "c"}
	targets := []string{"web", "api", "db"}
	revisions := []string{"r1", "r2", "r3", "r4"}
	var names []string
	for i := range 24 {
		names = append(names, fmt.Sprintf("c%02d", i))
		e.register(names[i], "dev", types[i%3])
	}
	posted := map[string]bool{}
	checked := 0
	for step := range 400 {
		e.clock.Advance(time.Duration(rng.IntN(90)) * time.Second)
		switch rng.IntN(10) {
		case 0:
			rev := revisions[rng.IntN(len(revisions))]
			if !posted[rev] {
				var as []hub.DesiredAssignment
				for _, ct := range types {
					for _, dt := range targets[:1+rng.IntN(3)] {
						as = append(as, assign(dt, ct+"-"+dt, ct))
					}
				}
				e.desired("dev", rev, as...)
				posted[rev] = true
			}
		case 1:
			if _, err := e.hub.ExpireStale(context.Background()); err != nil {
				t.Fatal(err)
			}
		default:
			c := names[rng.IntN(len(names))]
			r := hub.Report{Cluster: c, Revision: revisions[rng.IntN(len(revisions))],
				Status:     []hub.ClusterStatus{hub.Compliant, hub.NonCompliant, hub.Progressing}[rng.IntN(3)],
				ObservedAt: e.clock.Now().Add(-time.Duration(rng.IntN(120)) * time.Second)}
			ct := types[(int(c[1]-'0')*10+int(c[2]-'0'))%3]
			for _, dt := range targets {
				if rng.IntN(2) == 0 {
					r.Deployments = append(r.Deployments, dep(ct+"-"+dt, []hub.DeploymentStatus{hub.Ready, hub.Failed, hub.DeploymentProgress}[rng.IntN(3)]))
				}
			}
			e.mustReport(r)
		}
		if step%20 == 19 && len(posted) > 0 {
			checked++
			checkAgainstRecount(t, e, step)
		}
	}
	if checked < 15 {
		t.Fatalf("only %d recount checks ran", checked)
	}
}

// checkAgainstRecount compares the rollout with a count from scratch. The hub's background
// sweep (on a real-time ticker, with the test's clock far ahead) may expire clusters between
// the two reads, so the recount is read before and after the rollout, and the comparison is
// made once both agree (expiry only ever goes one way, and nothing else runs meanwhile).
func checkAgainstRecount(t *testing.T, e *env, step int) {
	t.Helper()
	for attempt := 1; ; attempt++ {
		before := recount(t, e)
		got := e.devRollout()
		if after := recount(t, e); !cmp.Equal(before, after) && attempt < 5 {
			continue // the sweep expired a cluster meanwhile
		}
		if diff := cmp.Diff(before, got); diff != "" {
			t.Fatalf("step %d: rollout differs from a recount (-recount +rollout):\n%s", step, diff)
		}
		return
	}
}

// recount counts the rollout of dev's latest desired revision from the clusters' states.
func recount(t *testing.T, e *env) map[string]hub.TargetRollout {
	t.Helper()
	ctx := context.Background()
	var want map[string]hub.TargetRollout
	err := e.store.View(ctx, func(r hub.Reader) error {
		d, err := r.LatestDesired(ctx, "dev")
		if err != nil {
			return err
		}
		clusters, err := r.Clusters(ctx, "dev")
		if err != nil {
			return err
		}
		want = map[string]hub.TargetRollout{}
		for _, a := range d.Assignments {
			tr := hub.TargetRollout{Workload: a.Workload, DeploymentTarget: a.DeploymentTarget, ClusterType: a.ClusterType}
			for _, c := range clusters {
				if c.ClusterType != a.ClusterType {
					continue
				}
				tr.Clusters++
				deps, err := r.Deployments(ctx, c.Name)
				if err != nil {
					return err
				}
				switch state := recountState(c, deps, d.Revision, a.DeploymentTarget); state {
				case hub.StateCompliant:
					tr.Compliant++
				case hub.StateFailed:
					tr.Failed++
				case hub.StateProgressing:
					tr.Progressing++
				default:
					tr.Unknown++
				}
			}
			want[a.ClusterType+"/"+a.DeploymentTarget] = tr
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return want
}

func recountState(c hub.ClusterRecord, deps []hub.DeploymentState, revision, dt string) hub.State {
	switch {
	case !c.Reported || !c.Fresh:
		return hub.StateUnknown
	case c.Revision != revision:
		return hub.StateProgressing
	}
	for _, d := range deps {
		if d.DeploymentTarget == dt {
			switch d.Status {
			case hub.Ready:
				return hub.StateCompliant
			case hub.Failed:
				return hub.StateFailed
			}
			return hub.StateProgressing
		}
	}
	switch c.Status {
	case hub.Compliant:
		return hub.StateCompliant
	case hub.NonCompliant:
		return hub.StateFailed
	}
	return hub.StateProgressing
}
