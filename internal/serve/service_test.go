package serve

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/fleetform/fleetform/internal/controlplane"
	"github.com/fleetform/fleetform/internal/fleet"
	"github.com/fleetform/fleetform/internal/hub"
	"github.com/fleetform/fleetform/internal/testutil/gittest"
	"github.com/fleetform/fleetform/internal/testutil/storetest"
)

// clock is a test clock.
type clock struct{ now time.Time }

func (c *clock) Now() time.Time          { return c.now }
func (c *clock) Advance(d time.Duration) { c.now = c.now.Add(d) }

const interval = time.Minute

// fixture is a folder-layout control plane with environments dev and prod (both following
// the tip), a workload repository registered for dev only, a GitOps repository and a hub.
type fixture struct {
	t       *testing.T
	cp      *gittest.Repo
	files   map[string]string
	apps    *gittest.Repo
	gitops  *gittest.Repo
	hub     *hub.Hub
	clock   *clock
	svc     *Service
	appsURL string
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	f := &fixture{t: t, cp: gittest.NewBare(t), apps: gittest.NewBare(t), gitops: gittest.NewBare(t).Checked(t),
		clock: &clock{now: time.Date(2026, 11, 24, 9, 0, 0, 0, time.UTC)}, appsURL: "https://example.com/apps"}
	f.hub = storetest.RunningHub(t, hub.Options{Now: f.clock.Now})
	f.files = map[string]string{
		"registration.yaml": `apiVersion: scheduler.kalypso.io/v1alpha1
kind: WorkloadRegistration
metadata: {name: apps}
spec:
  workload: {repo: ` + f.appsURL + `, branch: main, path: .}
  workspace: retail
`,
		"common.yaml": configMap("common", "RELEASE", "1"),
	}
	for _, env := range []string{"dev", "prod"} {
		f.files["environments/"+env+"/env.yaml"] = fmt.Sprintf(`apiVersion: scheduler.kalypso.io/v1alpha1
kind: Environment
metadata: {name: %s}
spec:
  controlPlane: {repo: https://example.com/cp, branch: main, path: .}
---
apiVersion: scheduler.kalypso.io/v1alpha1
kind: ClusterType
metadata: {name: large}
spec: {reconciler: builtin/flux, namespaceService: builtin/namespace, configType: builtin/configmap}
---
apiVersion: scheduler.kalypso.io/v1alpha1
kind: SchedulingPolicy
metadata: {name: all}
spec:
  deploymentTargetSelector: {labelSelector: {}}
  clusterTypeSelector: {labelSelector: {}}
---
apiVersion: scheduler.kalypso.io/v1alpha1
kind: GitOpsRepo
metadata: {name: %s}
spec: {repo: %s, branch: %s, path: .}
`, env, env, f.gitops.Dir, env)
		f.files["environments/"+env+"/config.yaml"] = configMap(env+"-config", "LOG_LEVEL", "info")
	}
	f.cp.Commit(t, "main", f.files)
	f.apps.Commit(t, "main", map[string]string{"shop.yaml": workload("1")})
	f.svc = New(Options{Fleet: fleet.New(fleet.Config{ControlPlane: f.cp.Dir, Read: controlplane.Options{RepoMap: controlplane.RepoMap{f.appsURL: f.apps.Dir}},
		CacheDir: t.TempDir(), Hub: fleet.LocalHub(f.hub)}), Interval: interval, Hub: f.hub, Now: f.clock.Now})
	return f
}

func configMap(name, key, value string) string {
	return fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: %s, labels: {platform-config: \"true\"}}\ndata: {%s: %q}\n", name, key, value)
}

func workload(version string) string {
	return `apiVersion: scheduler.kalypso.io/v1alpha1
kind: Workload
metadata: {name: shop}
spec:
  deploymentTargets:
    - {name: web, environment: dev, manifests: {repo: https://example.com/shop, branch: dev, path: ./web, version: "` + version + `"}}
`
}

// commit changes control-plane files.
func (f *fixture) commit(changes map[string]string) {
	f.t.Helper()
	maps.Copy(f.files, changes)
	f.cp.Commit(f.t, "main", f.files)
}

// round lets an interval pass and runs one round.
func (f *fixture) round() {
	f.t.Helper()
	f.clock.Advance(interval)
	f.svc.round(f.t.Context(), map[string]bool{})
}

func (f *fixture) tips() map[string]plumbing.Hash {
	return map[string]plumbing.Hash{"dev": f.gitops.Tip(f.t, "dev"), "prod": f.gitops.Tip(f.t, "prod")}
}

func (f *fixture) latest(env string) hub.SyncRecord {
	f.t.Helper()
	rec, err := f.hub.LatestSync(f.t.Context(), env)
	if err != nil {
		f.t.Fatalf("latest sync of %s: %v", env, err)
	}
	return rec
}

// TestChangesReachOnlyTheirEnvironments: the first round syncs every environment; then a
// change to an environment's folder syncs that environment, a change to the common content
// every environment that follows the tip, a workload repository's change the environments
// with targets of it; nothing changed, nothing is done beyond the poll.
func TestChangesReachOnlyTheirEnvironments(t *testing.T) {
	f := newFixture(t)
	if _, err := f.svc.lead(t.Context(), nil); err != nil || f.svc.Ready() {
		t.Fatalf("before the first round: ready %v (%v), want not ready", f.svc.Ready(), err)
	}
	f.svc.round(t.Context(), map[string]bool{})
	if !f.svc.Ready() {
		t.Fatal("not ready after the first round")
	}
	start := f.tips()
	for env, tip := range start {
		if tip.IsZero() {
			t.Fatalf("%s not applied at the start", env)
		}
		if rec := f.latest(env); rec.Trigger != hub.TriggerStart || rec.GitOpsCommit != tip.String() || rec.Error != "" {
			t.Errorf("%s: first sync %+v, want the start's commit %s", env, rec, tip)
		}
	}
	sources, err := f.hub.Sources(t.Context())
	if err != nil || len(sources) != 2 {
		t.Fatalf("sources %+v, %v: want the control plane and the workload repository", sources, err)
	}

	// Nothing changed: no sync at all.
	devSync := f.latest("dev").Time
	f.round()
	if got := f.latest("dev").Time; !got.Equal(devSync) || f.tips()["dev"] != start["dev"] {
		t.Errorf("a round with nothing changed synced dev (at %s)", got)
	}

	// dev's own folder: dev only.
	f.commit(map[string]string{"environments/dev/config.yaml": configMap("dev-config", "LOG_LEVEL", "debug")})
	f.round()
	after := f.tips()
	if after["dev"] == start["dev"] || after["prod"] != start["prod"] {
		t.Errorf("a change in environments/dev/: tips %v -> %v, want dev only", start, after)
	}
	if rec := f.latest("prod"); rec.Trigger != hub.TriggerStart {
		t.Errorf("prod was synced (%s) by a change of dev's folder", rec.Trigger)
	}

	// The common content: both (they follow the tip).
	f.commit(map[string]string{"common.yaml": configMap("common", "RELEASE", "2")})
	f.round()
	common := f.tips()
	if common["dev"] == after["dev"] || common["prod"] == after["prod"] {
		t.Errorf("a change of the common content: tips %v -> %v, want both", after, common)
	}

	// The workload repository: dev, which has its targets; prod has none.
	prodSync := f.latest("prod").Time
	f.apps.Commit(t, "main", map[string]string{"shop.yaml": workload("2")})
	f.round()
	if got := f.tips(); got["dev"] == common["dev"] || got["prod"] != common["prod"] {
		t.Errorf("a workload repository's change: tips %v -> %v, want dev only", common, got)
	}
	if got := f.latest("prod").Time; !got.Equal(prodSync) {
		t.Error("prod, without targets of the workload, was synced")
	}
}

// TestSourcesByRepositoryAndBranch: a registration moved to another branch of the same
// repository is followed there (the old branch is no longer polled nor listed by the hub),
// and a push to the new
// branch reaches its environment; a webhook for the repository wakes it.
func TestSourcesByRepositoryAndBranch(t *testing.T) {
	f := newFixture(t)
	f.apps.Commit(t, "release", map[string]string{"shop.yaml": workload("10")})
	f.svc.round(t.Context(), map[string]bool{})
	f.commit(map[string]string{"registration.yaml": strings.Replace(f.files["registration.yaml"], "branch: main", "branch: release", 1)})
	f.round()
	f.round() // the moved registration's source is polled once: what there is
	f.svc.mu.Lock()
	var branches []string
	for _, src := range f.svc.sources {
		if src.kind == KindWorkload {
			branches = append(branches, src.branch)
		}
	}
	f.svc.mu.Unlock()
	if !slices.Equal(branches, []string{"release"}) {
		t.Fatalf("workload sources at branches %v, want release only", branches)
	}
	recorded, err := f.hub.Sources(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for _, src := range recorded {
		if src.URL == f.appsURL && src.Branch != "release" {
			t.Errorf("the hub still lists the forgotten source %s at %s", src.URL, src.Branch)
		}
	}
	before := f.tips()["dev"]
	f.apps.Commit(t, "release", map[string]string{"shop.yaml": workload("11")})
	if !f.svc.Trigger(f.appsURL) {
		t.Error("a webhook for the repository is not a source's")
	}
	f.round()
	if f.tips()["dev"] == before {
		t.Error("a push to the registration's new branch did not reach dev")
	}
}

// TestAuthoredChangesAreNotWebhooks: a change made through serve (its authoring API or the
// UI) syncs with trigger "authoring", not "webhook".
func TestAuthoredChangesAreNotWebhooks(t *testing.T) {
	f := newFixture(t)
	f.svc.round(t.Context(), map[string]bool{})
	f.round() // the first round's sources are polled once: what there is
	f.commit(map[string]string{"environments/dev/config.yaml": configMap("dev-config", "LOG_LEVEL", "debug")})
	f.svc.Authored()
	woken := map[string]bool{}
	wake(woken, <-f.svc.wake)
	f.clock.Advance(time.Second) // not due yet: the wake-up polls the control plane
	f.svc.round(t.Context(), woken)
	if rec := f.latest("dev"); rec.Trigger != hub.TriggerAuthoring {
		t.Errorf("dev synced with trigger %q, want %q (%+v)", rec.Trigger, hub.TriggerAuthoring, rec)
	}
}

// TestMassDeletionConfirmed: a sync that would remove most of an environment's folders is
// refused, saying how to confirm it in serve (not a flag serve does not have); a round
// without a confirmation, or with one of another commit, changes nothing; once someone
// confirms it at the refused control-plane commit (recorded in the history), the next round
// applies it, with trigger mass-deletion.
func TestMassDeletionConfirmed(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	f.svc.round(ctx, map[string]bool{})
	start := f.tips()["dev"]
	if files := f.gitops.Files(t, "dev"); files["large/shop-web/reconciler.yaml"] == "" {
		t.Fatalf("dev's first sync wrote no folder for shop-web: %v", slices.Sorted(maps.Keys(files)))
	}
	delete(f.files, "registration.yaml")
	f.cp.Commit(t, "main", f.files)
	f.round()
	refused := f.latest("dev")
	if f.tips()["dev"] != start || !strings.HasPrefix(refused.Error, hub.MassDeletionRefused) ||
		!strings.Contains(refused.Error, "confirm it on the environment's page") || strings.Contains(refused.Error, "--allow-mass-delete") {
		t.Fatalf("the sync removing dev's only folder: %+v (tip moved: %v)", refused, f.tips()["dev"] != start)
	}

	f.round()
	if err := f.hub.ConfirmMassDeletion(ctx, hub.MassDeletionConfirmation{Environment: "dev", Commit: strings.Repeat("1", 40),
		Reason: "another commit", By: "ada"}); err != nil {
		t.Fatal(err)
	}
	f.round()
	if f.tips()["dev"] != start {
		t.Fatal("dev was applied without a confirmation of its commit")
	}

	if err := f.hub.ConfirmMassDeletion(ctx, hub.MassDeletionConfirmation{Environment: "dev", Commit: refused.ControlPlaneCommit,
		Reason: "shop is retired", By: "ada"}); err != nil {
		t.Fatal(err)
	}
	f.round()
	rec := f.latest("dev")
	if f.tips()["dev"] == start || rec.Trigger != hub.TriggerMassDeletion || rec.Error != "" {
		t.Fatalf("after the confirmation: %+v (tip moved: %v)", rec, f.tips()["dev"] != start)
	}
	if files := f.gitops.Files(t, "dev"); files["large/shop-web/reconciler.yaml"] != "" {
		t.Error("the confirmed deletion left shop-web's folder")
	}
	events, err := f.hub.History(ctx, hub.HistoryFilter{Environment: "dev", Kind: hub.EventMassDeletion})
	if err != nil || len(events) != 2 || !strings.Contains(events[0].Message, "confirmed by ada: shop is retired") {
		t.Errorf("history %+v, %v", events, err)
	}
}

// TestSyncNow: an administrator's "sync now" syncs the environment at the next round,
// although nothing it reads moved, recorded with trigger manual; a replica that does not
// lead says so.
func TestSyncNow(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	if err := f.svc.SyncNow("prod"); !errors.Is(err, ErrNotLeading) {
		t.Fatalf("sync now before leading: %v", err)
	}
	if _, err := f.svc.lead(ctx, nil); err != nil {
		t.Fatal(err)
	}
	f.svc.round(ctx, map[string]bool{})
	started := f.latest("prod")
	if err := f.svc.SyncNow("prod"); err != nil {
		t.Fatal(err)
	}
	woken := map[string]bool{}
	wake(woken, <-f.svc.wake)
	f.clock.Advance(time.Second)
	f.svc.round(ctx, woken)
	if rec := f.latest("prod"); rec.Trigger != hub.TriggerManual || !rec.Time.After(started.Time) || rec.Error != "" {
		t.Errorf("prod after sync now: %+v", rec)
	}
	if rec := f.latest("dev"); rec.Trigger != hub.TriggerStart {
		t.Errorf("dev was synced too: %+v", rec)
	}
}

// TestIdlePollsWriteLittle: a poll that finds nothing new is recorded in the hub at most
// every sourceRecordEvery, a change at once; and with nothing moving, the promotion round
// runs at most every watchEvery however short the interval.
func TestIdlePollsWriteLittle(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	f.svc.round(ctx, map[string]bool{})
	key := sourceKey(f.cp.Dir, "")
	recorded := func() hub.SourceState {
		t.Helper()
		all, err := f.hub.Sources(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range all {
			if s.URL == shownURL(f.cp.Dir) {
				return s
			}
		}
		t.Fatalf("the control plane is not among the sources %+v", all)
		return hub.SourceState{}
	}
	poll := func(d time.Duration, lastErr string) {
		f.clock.Advance(d)
		f.svc.mu.Lock()
		src := f.svc.sources[key]
		src.lastPoll, src.lastErr = f.clock.Now(), lastErr
		f.svc.mu.Unlock()
		f.svc.putSource(ctx, key)
	}
	poll(0, "")
	first := recorded().LastPoll
	poll(10*time.Second, "")
	if got := recorded().LastPoll; !got.Equal(first) {
		t.Errorf("a poll 10 s later that found nothing new was written (%s -> %s)", first, got)
	}
	poll(time.Second, "git fetch: connection refused")
	if got := recorded(); got.LastError == "" {
		t.Errorf("a failed poll was not written at once: %+v", got)
	}
	poll(2*time.Minute, "")
	if got := recorded(); got.LastError != "" || !got.LastPoll.Equal(f.clock.Now()) {
		t.Errorf("the poll after a minute: %+v", got)
	}

	svc := New(Options{Fleet: f.svc.opts.Fleet, Interval: time.Second, Hub: f.hub, Now: f.clock.Now, Promote: true})
	if !svc.watchDue() {
		t.Fatal("the first promotion round is not due")
	}
	svc.lastWatch = f.clock.Now()
	f.clock.Advance(time.Second)
	if svc.watchDue() {
		t.Error("a promotion round is due one interval (1 s) after the last, with nothing moving")
	}
	f.clock.Advance(watchEvery)
	if !svc.watchDue() {
		t.Errorf("no promotion round due %s after the last", watchEvery+time.Second)
	}
}
