package storetest

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fleetform/fleetform/internal/hub"
)

func (s suite) testTokens(t *testing.T) {
	store, _ := s.open(t)
	e := start(t, store, newClock())
	ctx := context.Background()
	generated, err := e.hub.Bootstrap(ctx, "")
	if err != nil || generated == "" {
		t.Fatalf("bootstrap generated %q, %v", generated, err)
	}
	if again, err := e.hub.Bootstrap(ctx, ""); err != nil || again != "" {
		t.Fatalf("second bootstrap generated %q (%v): the admin token is shown once", again, err)
	}
	p, err := e.hub.Authenticate(ctx, generated)
	if err != nil || p.Kind != hub.TokenAdmin {
		t.Fatalf("admin token authenticates as %+v, %v", p, err)
	}
	if _, err := e.hub.Bootstrap(ctx, "from-the-environment"); err != nil {
		t.Fatal(err)
	}
	if p, err := e.hub.Authenticate(ctx, "from-the-environment"); err != nil || p.Kind != hub.TokenAdmin {
		t.Fatalf("environment admin token: %+v, %v", p, err)
	}
	read, err := e.hub.CreateReadToken(ctx, "grafana")
	if err != nil {
		t.Fatal(err)
	}
	if p, err := e.hub.Authenticate(ctx, read); err != nil || p.Kind != hub.TokenRead {
		t.Fatalf("read token: %+v, %v", p, err)
	}
	if _, err := e.hub.Authenticate(ctx, "nope"); code(err) != hub.CodeUnauthorized {
		t.Fatalf("unknown token: %v", err)
	}
	err = store.View(ctx, func(r hub.Reader) error {
		tok, err := r.Token(ctx, hub.HashToken(read))
		if err != nil {
			return err
		}
		if string(tok.Hash) == read || tok.Kind != hub.TokenRead {
			t.Errorf("stored token %+v", tok)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func (s suite) testRegistration(t *testing.T) {
	store, _ := s.open(t)
	e := start(t, store, newClock())
	ctx := context.Background()
	tok := e.register("edge-1", "dev", "edge")
	p, err := e.hub.Authenticate(ctx, tok)
	if err != nil || p.Kind != hub.TokenCluster || p.Cluster != "edge-1" {
		t.Fatalf("cluster token: %+v, %v", p, err)
	}
	if _, err := e.hub.RegisterCluster(ctx, hub.Cluster{Name: "edge-1", Environment: "dev", ClusterType: "edge"}, false); code(err) != hub.CodeConflict {
		t.Fatalf("second registration: %v, want conflict", err)
	}
	rotated, err := e.hub.RegisterCluster(ctx, hub.Cluster{Name: "edge-1", Environment: "dev", ClusterType: "edge",
		Labels: map[string]string{"site": "a"}}, true)
	if err != nil || rotated == tok {
		t.Fatalf("rotate: %q, %v", rotated, err)
	}
	if _, err := e.hub.Authenticate(ctx, tok); code(err) != hub.CodeUnauthorized {
		t.Fatalf("old token after rotation: %v", err)
	}
	if p, err := e.hub.Authenticate(ctx, rotated); err != nil || p.Cluster != "edge-1" {
		t.Fatalf("new token: %+v, %v", p, err)
	}
	if _, err := e.hub.RegisterCluster(ctx, hub.Cluster{Name: "edge-1", Environment: "prod", ClusterType: "edge"}, true); code(err) != hub.CodeConflict {
		t.Fatalf("rotating into another environment: %v", err)
	}
	if _, err := e.hub.RegisterCluster(ctx, hub.Cluster{Name: "Bad Name", Environment: "dev", ClusterType: "edge"}, false); code(err) != hub.CodeInvalid {
		t.Fatalf("invalid name: %v", err)
	}
	d, err := e.hub.Cluster(ctx, "edge-1")
	if err != nil || d.Labels["site"] != "a" || d.State != "unknown" {
		t.Fatalf("cluster detail %+v, %v", d, err)
	}
	if _, err := e.hub.Cluster(ctx, "nope"); code(err) != hub.CodeNotFound {
		t.Fatalf("unknown cluster: %v", err)
	}
}

func (s suite) testDesired(t *testing.T) {
	store, _ := s.open(t)
	e := start(t, store, newClock())
	ctx := context.Background()
	a := []hub.DesiredAssignment{assign("shop", "shop-web", "large"), assign("shop", "shop-api", "large")}
	e.desired("dev", "r1", a...)
	e.desired("dev", "r1", a[1], a[0]) // the same again: no-op
	err := e.hub.PostDesired(ctx, hub.Desired{Environment: "dev", Revision: "r1", Assignments: a[:1]})
	if code(err) != hub.CodeConflict {
		t.Fatalf("other assignments for the same revision: %v", err)
	}
	e.clock.Advance(time.Minute)
	waiting := a[0]
	waiting.Waiting = []string{"config of shop on large: REPLICAS is required", "LOG_LEVEL: must be one of info, debug"}
	e.desired("dev", "r2", waiting)
	var got hub.Desired
	err = store.View(ctx, func(r hub.Reader) error {
		var err error
		got, err = r.LatestDesired(ctx, "dev")
		return err
	})
	if err != nil || got.Revision != "r2" || len(got.Assignments) != 1 || got.Assignments[0].Manifests["path"] != "./shop-web" ||
		!slices.Equal(got.Assignments[0].Waiting, waiting.Waiting) {
		t.Fatalf("latest desired %+v, %v", got, err)
	}
	// The same assignments waiting for other keys are another desired state.
	waiting.Waiting = waiting.Waiting[:1]
	if err := e.hub.PostDesired(ctx, hub.Desired{Environment: "dev", Revision: "r2", Assignments: []hub.DesiredAssignment{waiting}}); code(err) != hub.CodeConflict {
		t.Fatalf("other waiting keys for the same revision: %v", err)
	}
	err = store.View(ctx, func(r hub.Reader) error {
		_, err := r.LatestDesired(ctx, "prod")
		if !isNotFound(err) {
			t.Errorf("latest desired of an unknown environment: %v", err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.hub.PostDesired(ctx, hub.Desired{Environment: "dev"}); code(err) != hub.CodeInvalid {
		t.Fatalf("no revision: %v", err)
	}
}

// testRolloutStates checks every rule of the rollout.
func (s suite) testRolloutStates(t *testing.T) {
	store, _ := s.open(t)
	e := start(t, store, newClock())
	for _, c := range []string{"l1", "l2", "l3", "l4", "l5", "l6"} {
		e.register(c, "dev", "large")
	}
	e.register("s1", "dev", "small")
	e.desired("dev", "r1", assign("shop", "shop-web", "large"), assign("shop", "shop-api", "large"), assign("shop", "shop-web", "small"))
	e.mustReport(hub.Report{Cluster: "l1", Revision: "r1", Status: hub.Compliant, Deployments: []hub.DeploymentReport{dep("shop-web", hub.Ready), dep("shop-api", hub.Ready)}})
	e.mustReport(hub.Report{Cluster: "l2", Revision: "r1", Status: hub.NonCompliant, Deployments: []hub.DeploymentReport{dep("shop-web", hub.Failed), dep("shop-api", hub.Ready)}})
	e.mustReport(hub.Report{Cluster: "l3", Revision: "r1", Status: hub.Progressing, Deployments: []hub.DeploymentReport{dep("shop-web", hub.DeploymentProgress)}})
	e.mustReport(hub.Report{Cluster: "l4", Revision: "r1", Status: hub.NonCompliant}) // no entries: the cluster's status decides
	e.mustReport(hub.Report{Cluster: "l5", Revision: "r0", Status: hub.Compliant})    // another revision: progressing
	// l6 never reports: unknown. s1 reports compliant.
	e.mustReport(hub.Report{Cluster: "s1", Revision: "r1", Status: hub.Compliant})
	got := e.devRollout()
	want := map[string]hub.TargetRollout{
		"large/shop-web": {Workload: "shop", DeploymentTarget: "shop-web", ClusterType: "large", Clusters: 6, Compliant: 1, Failed: 2, Progressing: 2, Unknown: 1},
		"large/shop-api": {Workload: "shop", DeploymentTarget: "shop-api", ClusterType: "large", Clusters: 6, Compliant: 2, Failed: 1, Progressing: 2, Unknown: 1},
		"small/shop-web": {Workload: "shop", DeploymentTarget: "shop-web", ClusterType: "small", Clusters: 1, Compliant: 1},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("rollout (-want +got):\n%s", diff)
	}
	// l5 catches up; l2 recovers.
	e.clock.Advance(time.Second)
	e.mustReport(hub.Report{Cluster: "l5", Revision: "r1", Status: hub.Compliant, Deployments: []hub.DeploymentReport{dep("shop-web", hub.Ready), dep("shop-api", hub.Ready)}})
	e.mustReport(hub.Report{Cluster: "l2", Revision: "r1", Status: hub.Compliant, Deployments: []hub.DeploymentReport{dep("shop-web", hub.Ready), dep("shop-api", hub.Ready)}})
	got = e.devRollout()
	if g := got["large/shop-web"]; g.Compliant != 3 || g.Failed != 1 || g.Progressing != 1 || g.Unknown != 1 {
		t.Fatalf("after recovery: %+v", g)
	}
	if _, err := e.hub.Rollout(context.Background(), "prod"); code(err) != hub.CodeNotFound {
		t.Fatalf("rollout of an environment without desired state: %v", err)
	}
	// Reports are validated.
	for _, bad := range []hub.Report{
		{Cluster: "l1", Revision: "r1", Status: "Happy"},
		{Cluster: "l1", Status: hub.Compliant},
		{Cluster: "l1", Revision: "r1", Status: hub.Compliant, Deployments: []hub.DeploymentReport{{DeploymentTarget: "x", Status: "Green"}}},
	} {
		if err := e.report(bad); code(err) != hub.CodeInvalid {
			t.Errorf("report %+v: %v, want invalid", bad, err)
		}
	}
	if err := e.hub.Report(context.Background(), hub.Principal{Kind: hub.TokenCluster, Cluster: "l1"},
		hub.Report{Cluster: "l2", Revision: "r1", Status: hub.Compliant, ObservedAt: e.clock.Now()}); code(err) != hub.CodeForbidden {
		t.Errorf("another cluster's report: %v, want forbidden", err)
	}
}

func (s suite) testOrder(t *testing.T) {
	store, _ := s.open(t)
	e := start(t, store, newClock())
	e.register("c1", "dev", "large")
	e.desired("dev", "r2", assign("shop", "shop-web", "large"))
	t0 := e.clock.Now()
	e.mustReport(hub.Report{Cluster: "c1", Revision: "r2", Status: hub.Compliant, ObservedAt: t0.Add(2 * time.Second)})
	// An older report arriving late (link came back) must not overwrite the newer state.
	e.mustReport(hub.Report{Cluster: "c1", Revision: "r1", Status: hub.NonCompliant, ObservedAt: t0.Add(time.Second)})
	d, err := e.hub.Cluster(context.Background(), "c1")
	if err != nil || d.Revision != "r2" || d.Status != hub.Compliant {
		t.Fatalf("after a stale report: %+v, %v", d.ClusterRecord, err)
	}
	// The same report twice counts once.
	e.mustReport(hub.Report{Cluster: "c1", Revision: "r2", Status: hub.Compliant, ObservedAt: t0.Add(3 * time.Second)})
	e.mustReport(hub.Report{Cluster: "c1", Revision: "r2", Status: hub.Compliant, ObservedAt: t0.Add(3 * time.Second)})
	if r := e.devRollout()["large/shop-web"]; r.Compliant != 1 || r.Clusters != 1 {
		t.Fatalf("rollout after duplicates: %+v", r)
	}
}

func (s suite) testDesiredAfterReports(t *testing.T) {
	store, _ := s.open(t)
	e := start(t, store, newClock())
	e.register("c1", "dev", "large")
	e.register("c2", "dev", "large")
	e.mustReport(hub.Report{Cluster: "c1", Revision: "r9", Status: hub.Compliant, Deployments: []hub.DeploymentReport{dep("shop-web", hub.Failed)}})
	e.mustReport(hub.Report{Cluster: "c2", Revision: "r9", Status: hub.Compliant})
	e.desired("dev", "r9", assign("shop", "shop-web", "large"))
	if r := e.devRollout()["large/shop-web"]; r.Compliant != 1 || r.Failed != 1 || r.Clusters != 2 {
		t.Fatalf("desired posted after the reports: %+v", r)
	}
}

func (s suite) testStaleness(t *testing.T) {
	store, _ := s.open(t)
	e := start(t, store, newClock())
	e.register("c1", "dev", "large")
	e.register("c2", "dev", "large")
	e.desired("dev", "r1", assign("shop", "shop-web", "large"))
	e.mustReport(hub.Report{Cluster: "c1", Revision: "r1", Status: hub.Compliant})
	e.clock.Advance(6 * time.Minute)
	e.mustReport(hub.Report{Cluster: "c2", Revision: "r1", Status: hub.Compliant})
	e.clock.Advance(5 * time.Minute) // c1 is 11 minutes old, c2 5
	n, err := e.hub.ExpireStale(context.Background())
	if err != nil || n != 1 {
		t.Fatalf("expired %d, %v; want 1", n, err)
	}
	if r := e.devRollout()["large/shop-web"]; r.Compliant != 1 || r.Unknown != 1 {
		t.Fatalf("after expiry: %+v", r)
	}
	d, _ := e.hub.Cluster(context.Background(), "c1")
	if d.State != "unknown" || d.Fresh {
		t.Fatalf("expired cluster %+v", d)
	}
	e.mustReport(hub.Report{Cluster: "c1", Revision: "r1", Status: hub.Compliant}) // back
	if r := e.devRollout()["large/shop-web"]; r.Compliant != 2 || r.Unknown != 0 {
		t.Fatalf("after the cluster came back: %+v", r)
	}
	checkStaleClusters(t, store, e.clock.Now().Add(-5*time.Minute), e.clock.Now())
}

// checkStaleClusters: c2 last reported at c2At, c1 at c1At (later); StaleClusters lists
// the stale ones oldest first, up to the limit, and when fewer, the oldest other report.
func checkStaleClusters(t *testing.T, store hub.Store, c2At, c1At time.Time) {
	t.Helper()
	for _, c := range []struct {
		cutoff   time.Time
		limit    int
		stale    []string
		received time.Time
	}{
		{c2At, 1000, nil, c2At},
		{c2At.Add(time.Second), 1000, []string{"c2"}, c1At},
		{c1At.Add(time.Second), 1000, []string{"c2", "c1"}, time.Time{}},
		{c1At.Add(time.Second), 1, []string{"c2"}, time.Time{}},
	} {
		err := store.View(context.Background(), func(r hub.Reader) error {
			stale, received, err := r.StaleClusters(context.Background(), c.cutoff, c.limit)
			if err != nil {
				return err
			}
			if !slices.Equal(stale, c.stale) || !received.Equal(c.received) {
				t.Errorf("StaleClusters(%s, %d) = %v, %s; want %v, %s", c.cutoff.Format(time.TimeOnly), c.limit,
					stale, received.Format(time.TimeOnly), c.stale, c.received.Format(time.TimeOnly))
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}

// testRegisterBatch: a batch registers its clusters in one transaction: every one counted
// in its cluster type's rollout and recorded once in the history, in order; a batch with a
// cluster already registered fails whole without rotate and rotates only that one with it;
// a batch that names a cluster twice is refused without rotate.
func (s suite) testRegisterBatch(t *testing.T) {
	store, _ := s.open(t)
	e := start(t, store, newClock())
	ctx := context.Background()
	e.desired("dev", "r1", assign("shop", "shop-web", "large"), assign("shop", "shop-web", "small"))
	batch := []hub.Cluster{{Name: "l2", Environment: "dev", ClusterType: "large"}, {Name: "s1", Environment: "dev", ClusterType: "small"},
		{Name: "l1", Environment: "dev", ClusterType: "large"}, {Name: "p1", Environment: "prod", ClusterType: "large"}}
	tokens, err := e.hub.RegisterClusters(ctx, batch, false)
	if err != nil || len(tokens) != len(batch) {
		t.Fatalf("register a batch: %d tokens, %v", len(tokens), err)
	}
	for i, tok := range tokens {
		if p, err := e.hub.Authenticate(ctx, tok); err != nil || p.Cluster != batch[i].Name {
			t.Errorf("token %d: %+v, %v, want %s's", i, p, err, batch[i].Name)
		}
	}
	checkClusters := func(when string, want map[string]int) {
		t.Helper()
		got := map[string]int{}
		for k, r := range e.devRollout() {
			got[k] = r.Clusters
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("rollout %s (-want +got):\n%s", when, diff)
		}
	}
	want := map[string]int{"large/shop-web": 2, "small/shop-web": 1}
	checkClusters("after the batch", want)
	events, err := e.hub.History(ctx, hub.HistoryFilter{Kind: hub.EventRegistration})
	if err != nil {
		t.Fatal(err)
	}
	var registered []string
	for _, ev := range events {
		registered = append(registered, ev.Cluster)
	}
	if diff := cmp.Diff([]string{"p1", "l1", "s1", "l2"}, registered); diff != "" { // newest first
		t.Errorf("registration events (-want +got):\n%s", diff)
	}

	again := []hub.Cluster{{Name: "l3", Environment: "dev", ClusterType: "large"}, {Name: "l1", Environment: "dev", ClusterType: "large"}}
	if _, err := e.hub.RegisterClusters(ctx, again, false); code(err) != hub.CodeConflict {
		t.Fatalf("a batch with a registered cluster, without rotate: %v, want conflict", err)
	}
	checkClusters("after a refused batch", want)
	rotated, err := e.hub.RegisterClusters(ctx, again, true)
	if err != nil {
		t.Fatalf("a batch with a registered cluster, with rotate: %v", err)
	}
	if _, err := e.hub.Authenticate(ctx, tokens[2]); code(err) != hub.CodeUnauthorized {
		t.Errorf("l1's old token after the rotation: %v, want unauthorized", err)
	}
	if p, err := e.hub.Authenticate(ctx, rotated[1]); err != nil || p.Cluster != "l1" {
		t.Errorf("l1's new token: %+v, %v", p, err)
	}
	want["large/shop-web"] = 3 // l3 is new; l1 is counted once
	checkClusters("after the rotation", want)
	twice := []hub.Cluster{{Name: "s2", Environment: "dev", ClusterType: "small"}, {Name: "s2", Environment: "dev", ClusterType: "small"}}
	if _, err := e.hub.RegisterClusters(ctx, twice, false); code(err) != hub.CodeConflict {
		t.Fatalf("a batch naming a cluster twice: %v, want conflict", err)
	}
	checkClusters("after a refused batch", want)
}
