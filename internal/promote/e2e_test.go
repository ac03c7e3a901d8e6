package promote_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/fleetform/fleetform/internal/controlplane"
	"github.com/fleetform/fleetform/internal/forge"
	"github.com/fleetform/fleetform/internal/gitops"
	"github.com/fleetform/fleetform/internal/hub"
	"github.com/fleetform/fleetform/internal/promote"
	"github.com/fleetform/fleetform/internal/render"
	"github.com/fleetform/fleetform/internal/schedule"
	"github.com/fleetform/fleetform/internal/testutil/gittest"
	"github.com/fleetform/fleetform/internal/testutil/storetest"
)

// fleet is a control plane (folder layout, in git), a GitOps repository, and a hub.
type fleet struct {
	t      *testing.T
	cp     *gittest.Repo
	gitops *gittest.Repo
	hub    *hub.Hub
	clock  *testClock
	git    *gitops.Writer
	p      *promote.Promoter
	status *statuses
	files  map[string]string
	opts   controlplane.Options
}

type testClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *testClock) Now() time.Time          { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *testClock) Advance(d time.Duration) { c.mu.Lock(); defer c.mu.Unlock(); c.now = c.now.Add(d) }

func environment(name, promotion string) string {
	return fmt.Sprintf(`apiVersion: scheduler.kalypso.io/v1alpha1
kind: Environment
metadata: {name: %s}
spec:
  controlPlane: {repo: https://example.com/cp, branch: main, path: .}
%s`, name, promotion)
}

// newFleet is a folder-layout control plane: dev, stage (from dev: 100%, 30m soak) and
// prod (from stage: approval, a year-end freeze).
func newFleet(t *testing.T) *fleet {
	t.Helper()
	f := newHubFleet(t, gittest.NewBare(t))
	f.files = map[string]string{
		"workloads/shop.yaml": `apiVersion: scheduler.kalypso.io/v1alpha1
kind: Workload
metadata: {name: shop, labels: {workspace: retail}}
spec:
  deploymentTargets:
    - {name: dev, environment: dev, manifests: {repo: https://example.com/shop, branch: dev, path: ./web}}
    - {name: stage, environment: stage, manifests: {repo: https://example.com/shop, branch: stage, path: ./web}}
`,
		"config/version.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: common, labels: {platform-config: \"true\"}}\ndata: {RELEASE: \"1\"}\n",
	}
	for _, env := range []string{"dev", "stage", "prod"} {
		f.files["environments/"+env+"/types.yaml"] = fmt.Sprintf(`apiVersion: scheduler.kalypso.io/v1alpha1
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
`, env, f.gitops.Dir, env)
	}
	f.files["environments/dev/environment.yaml"] = environment("dev", "")
	f.files["environments/stage/environment.yaml"] = environment("stage", "  promotion: {from: dev, minCompliantPercent: 100, soak: 30m}\n")
	f.files["environments/prod/environment.yaml"] = environment("prod", `  promotion: {from: stage, approval: true}
  freezeWindows:
    - {from: "2026-12-20T00:00:00Z", to: "2027-01-03T00:00:00Z", reason: year-end freeze}
`)
	f.commit()
	return f
}

// newHubFleet starts a hub on SQLite and a promoter around control plane cp.
func newHubFleet(t *testing.T, cp *gittest.Repo) *fleet {
	t.Helper()
	f := &fleet{t: t, cp: cp, gitops: gittest.NewBare(t), clock: &testClock{now: time.Date(2026, 11, 18, 9, 0, 0, 0, time.UTC)}}
	f.hub = storetest.RunningHub(t, hub.Options{Now: f.clock.Now})
	f.git = gitops.NewWriter(gitops.Options{CacheDir: t.TempDir()})
	f.status = &statuses{}
	f.p = &promote.Promoter{Git: f.git, Hub: promote.LocalHub{Hub: f.hub}, Statuses: f.status}
	return f
}

// commit writes the control plane's files as the next commit on main.
func (f *fleet) commit() string {
	f.t.Helper()
	return f.cp.Commit(f.t, "main", f.files).String()
}

// sync re-reads main (promotions commit pins to it) into the test's file map.
func (f *fleet) sync() {
	f.t.Helper()
	f.files = f.cp.Files(f.t, "main")
}

func (f *fleet) open() *controlplane.ControlPlane {
	f.t.Helper()
	cp, err := controlplane.Open(f.t.Context(), f.cp.Dir, f.opts)
	if err != nil {
		f.t.Fatal(err)
	}
	return cp
}

func (f *fleet) promote(to, commit string) promote.Result {
	f.t.Helper()
	before := [2]plumbing.Hash{f.cp.Tip(f.t, "main"), f.cp.Tip(f.t, to)}
	res, err := f.p.Promote(f.t.Context(), promote.Request{ControlPlane: f.open(), To: to, Commit: commit, Now: f.clock.Now(), Actor: "test"})
	if err != nil {
		f.t.Fatalf("promote %s: %v", to, err)
	}
	if after := [2]plumbing.Hash{f.cp.Tip(f.t, "main"), f.cp.Tip(f.t, to)}; !res.Promoted && after != before {
		f.t.Fatalf("a refused promotion to %s moved main from %s to %s", to, before, after)
	}
	return res
}

// apply renders an environment into the GitOps repository and posts its desired state.
func (f *fleet) apply(env string) {
	f.t.Helper()
	cp := f.open()
	snap, err := cp.Load(f.t.Context(), env)
	if err != nil {
		f.t.Fatal(err)
	}
	sched := schedule.Schedule(snap)
	if len(snap.Diagnostics) > 0 || len(sched.Assignments) == 0 {
		f.t.Fatalf("%s: %d assignments, diagnostics %v", env, len(sched.Assignments), snap.Diagnostics)
	}
	res, err := f.git.Apply(f.t.Context(), gitops.Input{Snapshot: snap, Schedule: sched,
		Target: gitops.TargetFor(snap, gitops.Target{}, cp.Locate)}, gitops.CommitOptions{})
	if err != nil {
		f.t.Fatal(err)
	}
	var as []hub.DesiredAssignment
	for _, a := range sched.Assignments {
		as = append(as, hub.DesiredAssignment{Workload: a.Workload, DeploymentTarget: a.DeploymentTarget, ClusterType: a.ClusterType, Namespace: a.Namespace})
	}
	rev := res.Commit.String()
	if res.Commit.IsZero() {
		rev = res.Plan.Base.String()
	}
	if err := f.hub.PostDesired(f.t.Context(), hub.Desired{Environment: env, Revision: rev, PromotedCommit: snap.Revisions.Common,
		Assignments: as}); err != nil && hub.ErrorCode(err) != hub.CodeConflict {
		f.t.Fatal(err)
	}
}

// report makes a cluster report its environment's GitOps tip as Compliant.
func (f *fleet) report(cluster, env string) {
	f.t.Helper()
	r := hub.Report{Cluster: cluster, Revision: f.gitops.Tip(f.t, env).String(), Status: hub.Compliant, ObservedAt: f.clock.Now()}
	if err := f.hub.Report(f.t.Context(), hub.Principal{Kind: hub.TokenCluster, Cluster: cluster}, r); err != nil {
		f.t.Fatal(err)
	}
}

// statuses records the commit statuses a promoter sets.
type statuses struct{ set []string }

func (s *statuses) SetStatus(_ context.Context, commit string, st forge.CommitStatus) error {
	s.set = append(s.set, fmt.Sprintf("%s %s: %s", short(commit), st.Context, st.State))
	return nil
}

func short(c string) string { return c[:min(len(c), 7)] }

func wantRefused(t *testing.T, res promote.Result, reasons ...string) {
	t.Helper()
	if res.Promoted {
		t.Fatalf("promoted %s to %s; want refused for %q", res.Commit, res.To, reasons)
	}
	all := strings.Join(res.Reasons, "\n")
	for _, r := range reasons {
		if !strings.Contains(all, r) {
			t.Errorf("reasons:\n%s\nwant one containing %q", all, r)
		}
	}
}

func TestPromotionEndToEnd(t *testing.T) {
	f := newFleet(t)
	ctx := t.Context()
	// dev is first: promoting pins the tip of main.
	c1 := f.promote("dev", "")
	if !c1.Promoted || c1.PinCommit == "" {
		t.Fatalf("first promotion to dev: %+v", c1)
	}
	f.apply("dev")

	// No reports yet.
	wantRefused(t, f.promote("stage", ""), "dev: no cluster reports any deployment target at revision")
	for i := range 4 {
		if _, err := f.hub.RegisterCluster(ctx, hub.Cluster{Name: fmt.Sprintf("dev-%d", i), Environment: "dev", ClusterType: "large"}, false); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 3 {
		f.report(fmt.Sprintf("dev-%d", i), "dev")
	}
	wantRefused(t, f.promote("stage", ""), "dev: 3 of 4 clusters compliant at revision", ", 100% required")
	f.report("dev-3", "dev")
	wantRefused(t, f.promote("stage", ""), "of the 30m0s soak")
	// Review says the same, in the chain's order, and neither promotes nor records anything.
	tip := f.cp.Tip(t, "main")
	statuses, err := f.p.Review(ctx, f.open(), f.clock.Now())
	if err != nil || len(statuses) < 2 || statuses[0].Gates.Environment != "dev" || statuses[1].Gates.Environment != "stage" ||
		statuses[1].Candidate != c1.Commit || len(statuses[1].Unmet) != 1 || !strings.Contains(statuses[1].Unmet[0], "of the 30m0s soak") {
		t.Fatalf("review: %+v, %v", statuses, err)
	}
	if f.cp.Tip(t, "main") != tip {
		t.Fatal("a review moved main")
	}
	f.clock.Advance(31 * time.Minute)
	// A commit dev never verified is refused even once the gates pass.
	f.sync()
	f.files["config/version.yaml"] = strings.Replace(f.files["config/version.yaml"], `RELEASE: "1"`, `RELEASE: "2"`, 1)
	c2 := f.commit()
	wantRefused(t, f.promote("stage", c2), "dev is pinned to commit", "dev's GitOps branch carries commit")
	// The verified commit goes through.
	res := f.promote("stage", "")
	if !res.Promoted || res.Commit != c1.Commit {
		t.Fatalf("promotion to stage at the threshold: %+v", res)
	}
	if got, want := f.status.set[len(f.status.set)-2:], []string{short(c2) + " stage environment: pending",
		short(c1.Commit) + " stage environment: success"}; !slices.Equal(got, want) {
		t.Errorf("commit statuses %q, want %q", got, want)
	}
	stage, err := f.open().Load(ctx, "stage")
	if err != nil || stage.Revisions.Common != c1.Commit || !stage.Revisions.Pinned {
		t.Fatalf("stage renders %+v, want the promoted %s", stage.Revisions, c1.Commit)
	}
	// prod still renders its old pin although main has moved on (c2 and the pins).
	prod, err := f.open().Load(ctx, "prod")
	if err != nil || prod.Revisions.Pinned || prod.Revisions.Common == c1.Commit {
		t.Fatalf("prod renders %+v: it was never promoted", prod.Revisions)
	}
	// prod needs stage applied and verified, an approval, and no freeze.
	wantRefused(t, f.promote("prod", ""), "stage's GitOps branch carries commit (none)", "stage: the hub has no desired state",
		"prod requires an approval")
	if err := f.hub.Approve(ctx, "prod", c1.Commit, "alice"); err != nil {
		t.Fatal(err)
	}
	f.apply("stage")
	if _, err := f.hub.RegisterCluster(ctx, hub.Cluster{Name: "stage-0", Environment: "stage", ClusterType: "large"}, false); err != nil {
		t.Fatal(err)
	}
	f.report("stage-0", "stage")
	f.clock.now = time.Date(2026, 12, 24, 10, 0, 0, 0, time.UTC) // in the year-end freeze
	f.report("stage-0", "stage")
	wantRefused(t, f.promote("prod", ""), "prod is frozen until 2027-01-03T00:00:00Z: year-end freeze")
	// An emergency override goes through and is recorded.
	over, err := f.p.Promote(ctx, promote.Request{ControlPlane: f.open(), To: "prod", Override: true, Reason: "CVE-2026-1234 hotfix",
		Now: f.clock.Now(), Actor: "oncall"})
	if err != nil || !over.Promoted || len(over.Overridden) != 1 {
		t.Fatalf("override: %+v, %v", over, err)
	}
	events, err := f.hub.History(ctx, hub.HistoryFilter{Kind: hub.EventPromotion, Environment: "prod"})
	if err != nil || len(events) == 0 || !strings.Contains(events[0].Message, "override") || !strings.Contains(events[0].Message, "CVE-2026-1234 hotfix") ||
		!strings.Contains(events[0].Message, "oncall") {
		t.Fatalf("audit trail %+v, %v", events, err)
	}
	prod, err = f.open().Load(ctx, "prod")
	if err != nil || prod.Revisions.Common != c1.Commit {
		t.Fatalf("prod renders %+v after the override, want %s", prod.Revisions, c1.Commit)
	}
	if _, err := f.p.Promote(ctx, promote.Request{ControlPlane: f.open(), To: "prod", Override: true, Now: f.clock.Now()}); err == nil {
		t.Fatal("an override without a reason was accepted")
	}
}

// TestPromotionKalypsoLayout promotes on Kalypso's own sample: the pins are base-repo.yaml
// on the environment branches, the chain is declared in .environments/ on main.
func TestPromotionKalypsoLayout(t *testing.T) {
	k := gittest.NewKalypso(t)
	f := newHubFleet(t, k.ControlPlane)
	f.opts = controlplane.Options{RepoMap: controlplane.RepoMap{"https://github.com/microsoft/kalypso-gitops": f.gitops.Dir}}
	for u, p := range k.RepoMap {
		f.opts.RepoMap[u] = p
	}
	ctx := t.Context()
	files := k.ControlPlane.Files(t, "main")
	files[".environments/stage.yaml"] += "  promotion: {from: dev, minCompliantPercent: 100}\n"
	files["templates/scheduler_v1alpha1_template_configmap.yaml"] += "# a promotable change\n"
	c2 := k.ControlPlane.Commit(t, "main", files).String()

	res := f.promote("dev", "")
	if !res.Promoted || res.Commit != c2 {
		t.Fatalf("promotion to dev: %+v, want %s", res, c2)
	}
	devPin := k.ControlPlane.Files(t, "dev")["base-repo.yaml"]
	for _, want := range []string{"commit: " + c2, "repo: https://github.com/microsoft/kalypso-control-plane", "branch: main"} {
		if !strings.Contains(devPin, want) {
			t.Errorf("dev's base-repo.yaml:\n%s\nwant %q", devPin, want)
		}
	}
	if stage, err := f.open().Load(ctx, "stage"); err != nil || stage.Revisions.Common != k.Main.String() {
		t.Fatalf("stage renders %+v, want its old pin %s", stage.Revisions, k.Main)
	}
	f.apply("dev")
	wantRefused(t, f.promote("stage", ""), "dev: no cluster reports any deployment target")

	snap, err := f.open().Load(ctx, "dev")
	if err != nil {
		t.Fatal(err)
	}
	for i, a := range schedule.Schedule(snap).Assignments {
		name := fmt.Sprintf("dev-%s-%d", a.ClusterType, i)
		if _, err := f.hub.RegisterCluster(ctx, hub.Cluster{Name: name, Environment: "dev", ClusterType: a.ClusterType}, false); err != nil {
			t.Fatal(err)
		}
		f.report(name, "dev")
	}
	res = f.promote("stage", "")
	if !res.Promoted || res.Commit != c2 {
		t.Fatalf("promotion to stage: %+v", res)
	}
	if stage, err := f.open().Load(ctx, "stage"); err != nil || stage.Revisions.Common != c2 {
		t.Fatalf("stage renders %+v after the promotion, want %s", stage.Revisions, c2)
	}
}

// TestWatcherPromotesAutomatically: --watch promotes into automatic environments once the
// gates pass, applies them, and records a waiting promotion once, not every round.
func TestWatcherPromotesAutomatically(t *testing.T) {
	f := newFleet(t)
	ctx := t.Context()
	f.files["environments/stage/environment.yaml"] = environment("stage", "  promotion: {from: dev, minCompliantPercent: 100, soak: 30m, automatic: true}\n")
	f.commit()
	f.promote("dev", "")
	f.apply("dev")
	var applied []string
	w := &promote.Watcher{Promoter: f.p, Now: f.clock.Now, Actor: "watch",
		Open: func(context.Context) (*controlplane.ControlPlane, error) { return f.open(), nil }, //nolint:contextcheck // the test's own context
		Apply: func(_ context.Context, _ *controlplane.ControlPlane, env string) error {
			applied = append(applied, env)
			f.apply(env) //nolint:contextcheck // the test's own context
			return nil
		}}
	for range 3 {
		res, err := w.Round(ctx)
		if err != nil || len(res) != 1 || res[0].Promoted || res[0].To != "stage" {
			t.Fatalf("round before any report: %+v, %v", res, err)
		}
		f.clock.Advance(time.Minute)
	}
	events, err := f.hub.History(ctx, hub.HistoryFilter{Kind: hub.EventPromotion, Environment: "stage"})
	if err != nil || len(events) != 1 || !strings.Contains(events[0].Message, "refused") {
		t.Fatalf("three waiting rounds recorded %+v, %v; want one refusal", events, err)
	}
	if _, err := f.hub.RegisterCluster(ctx, hub.Cluster{Name: "dev-0", Environment: "dev", ClusterType: "large"}, false); err != nil {
		t.Fatal(err)
	}
	f.report("dev-0", "dev")
	// The facts changed (compliant now, the soak runs): the refusal is recorded again.
	if res, err := w.Round(ctx); err != nil || len(res) != 1 || res[0].Promoted {
		t.Fatalf("round during the soak: %+v, %v", res, err)
	}
	events, err = f.hub.History(ctx, hub.HistoryFilter{Kind: hub.EventPromotion, Environment: "stage"})
	if err != nil || len(events) != 2 || !strings.Contains(events[0].Message, "unchanged and compliant for") ||
		strings.Contains(events[0].Message, "no cluster reports") {
		t.Fatalf("the round during the soak recorded %+v, %v; want a second refusal with the soak alone", events, err)
	}
	f.clock.Advance(31 * time.Minute)
	res, err := w.Round(ctx)
	if err != nil || len(res) != 1 || !res[0].Promoted || len(applied) != 1 || applied[0] != "stage" {
		t.Fatalf("round after the soak: %+v, %v, applied %v", res, err, applied)
	}
	// Nothing newer: the next round does nothing.
	if res, err := w.Round(ctx); err != nil || len(res) != 0 {
		t.Fatalf("round with stage at dev's pin: %+v, %v", res, err)
	}
}

// TestPromotionFromAnUnpinnedSource: dev follows the tip of main (never promoted), so its
// GitOps branch has no Promoted_Commit_Id; the gate reads the commit dev was rendered from in
// fleetform's state instead.
func TestPromotionFromAnUnpinnedSource(t *testing.T) {
	f := newFleet(t)
	ctx := t.Context()
	f.apply("dev")
	if _, ok := f.gitops.Files(t, "dev")[render.PromotedCommitFile]; ok {
		t.Fatalf("%s written for dev, which follows the tip", render.PromotedCommitFile)
	}
	if _, err := f.hub.RegisterCluster(ctx, hub.Cluster{Name: "dev-0", Environment: "dev", ClusterType: "large"}, false); err != nil {
		t.Fatal(err)
	}
	f.report("dev-0", "dev")
	f.clock.Advance(31 * time.Minute)
	tip := f.cp.Tip(t, "main").String()
	res := f.promote("stage", "")
	if !res.Promoted || res.Commit != tip {
		t.Fatalf("promotion from the unpinned dev: %+v, want %s promoted", res, tip)
	}
}
