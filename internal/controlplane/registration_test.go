package controlplane_test

import (
	"bytes"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/fleetform/fleetform/internal/controlplane"
	"github.com/fleetform/fleetform/internal/testutil/gittest"
)

func TestRepoMapLookup(t *testing.T) {
	t.Parallel()
	m := controlplane.RepoMap{
		"https://github.com/org/app":   "/m/app",
		"https://github.com/org/":      "/m/org",
		"https://github.com/org/team/": "/m/team",
		"https://example.com/x.git":    "/m/x",
		"file:///srv/git/":             "/m/srv",
	}
	tests := []struct {
		url  string
		want string // "" when not mapped
	}{
		{"https://github.com/org/app", "/m/app"},
		{"https://github.com/org/app.git", "/m/app"},
		{"https://github.com/org/app/", "/m/app"},
		{" https://github.com/org/app ", "/m/app"},
		{"https://example.com/x", "/m/x"},
		{"https://example.com/x.git", "/m/x"},
		{"https://github.com/org/svc", "/m/org/svc"},
		{"https://github.com/org/svc.git", "/m/org/svc"},
		{"https://github.com/org/a/b", "/m/org/a/b"},
		{"https://github.com/org/team/a", "/m/team/a"}, // the longest prefix wins
		{"file:///srv/git/repo", "/m/srv/repo"},
		{"https://github.com/org/../../etc", "/m/org/etc"}, // never escapes the mapped folder
		{"https://github.com/org/team/../../../x", "/m/team/x"},
		{"https://github.com/org", ""},
		{"https://github.com/organisation/a", ""},
		{"https://github.com/other/app", ""},
		{"http://github.com/org/app", ""},
	}
	for _, tt := range tests {
		got, ok := m.Lookup(tt.url)
		if want := filepath.FromSlash(tt.want); got != want || ok != (tt.want != "") {
			t.Errorf("Lookup(%q) = %q, %v; want %q", tt.url, got, ok, want)
		}
	}
}

// registered finds a loaded workload by name.
func registered(t *testing.T, s *controlplane.Snapshot, name string) *controlplane.Workload {
	t.Helper()
	for _, w := range s.Workloads {
		if w.Metadata.Name == name {
			return w
		}
	}
	t.Fatalf("workload %s not loaded; loaded: %v", name, loaded(s))
	return nil
}

func workloadNames(s *controlplane.Snapshot) []string {
	var out []string
	for _, w := range s.Workloads {
		out = append(out, w.Metadata.Name)
	}
	slices.Sort(out)
	return out
}

// TestRegistrationMappedDirectory: a repository mapped to a plain directory is read as it
// is (the registration's branch does not apply), and its workloads get the registration's
// workspace whatever their own labels say.
func TestRegistrationMappedDirectory(t *testing.T) {
	t.Parallel()
	const url = "https://example.com/shop"
	repo := newDir(t, map[string]string{
		"workloads/shop.yaml": kindDoc("Workload", "shop", "  labels: {workspace: spoofed, tier: web, kustomize.toolkit.fluxcd.io/name: spoofed}\nspec:\n  deploymentTargets:\n"+
			"    - name: dev\n      environment: dev\n      manifests: {repo: r}\n"),
		"other/ignored.yaml": workloadDoc("outside-path", "dev"),
	})
	cp := newDir(t, map[string]string{
		"environments/dev/env.yaml": envDoc("dev"),
		"registrations.yaml":        registrationDoc("shop-team", url, "no-such-branch", "./workloads", "team-a"),
		"inline.yaml":               kindDoc("Workload", "inline", "  labels: {workspace: inline-team}\nspec:\n  deploymentTargets: []\n"),
	})
	snap := load(t, cp, "dev", controlplane.Options{RepoMap: controlplane.RepoMap{url: repo}})
	requireNoDiags(t, snap)
	equal(t, "workloads", workloadNames(snap), []string{"inline", "shop"})
	w := registered(t, snap, "shop")
	if w.Workspace != "team-a" || w.Registration != "shop-team" || w.Source.Repo != url || w.Source.File != "workloads/shop.yaml" || w.Source.Commit != "" {
		t.Errorf("workload shop: workspace %q registration %q source %+v", w.Workspace, w.Registration, w.Source)
	}
	if in := registered(t, snap, "inline"); in.Workspace != "inline-team" || in.Registration != "" {
		t.Errorf("inline workload: workspace %q registration %q", in.Workspace, in.Registration)
	}
	equal(t, "targets", targetNames(snap), []string{"shop-dev"})
	dt := snap.DeploymentTargets[0]
	if dt.Labels["workspace"] != "team-a" || dt.Labels["tier"] != "web" || dt.Workspace != "team-a" || dt.Registration != "shop-team" {
		t.Errorf("target = %+v", dt)
	}
	// The labels Kalypso's Flux gives the registered Workload (its Kustomization is
	// <environment>-<registration> in flux-system), over the workload's own.
	if got, want := dt.Labels["kustomize.toolkit.fluxcd.io/name"], "dev-shop-team"; got != want {
		t.Errorf("flux name label %q, want %q", got, want)
	}
	if got := dt.Labels["kustomize.toolkit.fluxcd.io/namespace"]; got != "flux-system" {
		t.Errorf("flux namespace label %q, want flux-system", got)
	}
}

// TestRegistrationMappedGit: a repository mapped to a git repository is read at the
// registration's branch (HEAD when empty); two registrations may share a repository.
func TestRegistrationMappedGit(t *testing.T) {
	t.Parallel()
	const url = "https://example.com/apps.git"
	r := gittest.New(t)
	r.Commit(t, "main", map[string]string{"workloads/a.yaml": workloadDoc("on-main", "dev")})
	dev := r.Commit(t, "dev", map[string]string{"workloads/a.yaml": workloadDoc("on-dev", "dev")})
	setHead(t, r, "main")
	cp := newDir(t, map[string]string{
		"environments/dev/env.yaml": envDoc("dev"),
		"registrations.yaml": joinDocs(
			registrationDoc("dev-branch", url, "dev", "workloads", "team-dev"),
			registrationDoc("head", "https://example.com/apps", "", ".", "team-main"),
			registrationDoc("missing-branch", url, "nope", ".", "team-x"), // lines 23-32
		),
	})
	snap := load(t, cp, "dev", controlplane.Options{RepoMap: controlplane.RepoMap{"https://example.com/apps": r.Dir}})
	checkDiags(t, snap.Diagnostics, want{file: "registrations.yaml", line: 29,
		has: []string{"WorkloadRegistration/missing-branch", "spec.workload.repo", "cannot read workloads from " + url, `ref "nope"`, "--repo-map"}})
	equal(t, "workloads", workloadNames(snap), []string{"on-dev", "on-main"})
	if w := registered(t, snap, "on-dev"); w.Source.Commit != dev.String() || w.Workspace != "team-dev" {
		t.Errorf("on-dev read at %s, workspace %q", w.Source.Commit, w.Workspace)
	}
	if w := registered(t, snap, "on-main"); w.Workspace != "team-main" {
		t.Errorf("on-main workspace %q", w.Workspace)
	}
	equal(t, "failed sources", snap.FailedSources, []string{"registration/missing-branch"})
}

// TestRegistrationRemoteHTTP: an unmapped URL is fetched over HTTP (from a loopback server).
func TestRegistrationRemoteHTTP(t *testing.T) {
	t.Parallel()
	r := gittest.NewBare(t)
	r.Commit(t, "main", map[string]string{
		"workloads/svc.yaml": workloadDoc("svc", "dev", "stage"),
		".github/wf.yaml":    "on: push\n",
	})
	release := r.Commit(t, "release", map[string]string{"workloads/svc.yaml": workloadDoc("svc-release", "dev")})
	setHead(t, r, "main")
	url := gittest.ServeRepo(t, r)
	cp := newDir(t, map[string]string{
		"environments/dev/env.yaml": envDoc("dev"),
		"registrations.yaml": joinDocs(
			registrationDoc("head", url, "", "./workloads", "team"),
			registrationDoc("release", url, "release", "./workloads", "team"),
			registrationDoc("not-found", url+"-missing", "main", ".", "team"), // lines 23-32
		),
	})
	snap := load(t, cp, "dev", controlplane.Options{})
	checkDiags(t, snap.Diagnostics, want{file: "registrations.yaml", line: 29, has: []string{"WorkloadRegistration/not-found", "cannot read workloads from " + url + "-missing"}})
	equal(t, "workloads", workloadNames(snap), []string{"svc", "svc-release"})
	equal(t, "targets", targetNames(snap), []string{"svc-dev", "svc-release-dev", "svc-stage"})
	if w := registered(t, snap, "svc-release"); w.Source.Repo != url || w.Source.Commit != release.String() {
		t.Errorf("svc-release source = %+v", w.Source)
	}
	equal(t, "failed sources", snap.FailedSources, []string{"registration/not-found"})
}

// TestRegistrationUnreachable: a repository that cannot be reached is reported on the
// registration's repo line and recorded in FailedSources; everything else loads. URL
// credentials never reach a message.
func TestRegistrationUnreachable(t *testing.T) {
	t.Parallel()
	down := strings.Replace(gittest.ClosedURL(t), "http://", "http://user:s3cr3t@", 1) + "/repo.git"
	okRepo := newDir(t, map[string]string{"w.yaml": workloadDoc("fine", "dev")})
	cp := newDir(t, map[string]string{
		"environments/dev/env.yaml": envDoc("dev"),
		"environments/dev/ct.yaml":  clusterTypeDoc("large"),
		"templates/t.yaml":          templateDoc("t"),
		"registrations.yaml": joinDocs(
			registrationDoc("down", down, "main", ".", "team"),                       // repo on line 7
			registrationDoc("gone", "https://example.com/gone", "main", ".", "team"), // repo on line 18
			registrationDoc("ok", "https://example.com/ok", "main", ".", "team"),
		),
	})
	snap := load(t, cp, "dev", controlplane.Options{RepoMap: controlplane.RepoMap{
		"https://example.com/ok":   okRepo,
		"https://example.com/gone": filepath.Join(t.TempDir(), "does-not-exist"),
	}})
	checkDiags(t, snap.Diagnostics,
		want{file: "registrations.yaml", line: 7, has: []string{"WorkloadRegistration/down", "spec.workload.repo", "cannot read workloads from http://***@127.0.0.1:"}},
		want{file: "registrations.yaml", line: 18, has: []string{"WorkloadRegistration/gone", "cannot read workloads from https://example.com/gone", "does-not-exist"}},
	)
	for _, d := range snap.Diagnostics {
		if strings.Contains(d.Error(), "s3cr3t") {
			t.Errorf("diagnostic leaks credentials: %v", d)
		}
	}
	equal(t, "failed sources", snap.FailedSources, []string{"registration/down", "registration/gone"})
	checkLoaded(t, snap, "ClusterType/large", "Template/t", "WorkloadRegistration/down", "WorkloadRegistration/gone",
		"WorkloadRegistration/ok", "Workload/fine", "DeploymentTarget/fine-dev")
}

// TestRegistrationBrokenFiles: a broken file in one registration's repository does not block
// that repository's other files nor another registration's workloads; a workload repository
// cannot bring platform objects.
func TestRegistrationBrokenFiles(t *testing.T) {
	t.Parallel()
	const urlA, urlB = "https://example.com/a", "https://example.com/b"
	repoA := newDir(t, map[string]string{
		"good.yaml": workloadDoc("a-good", "dev"),
		"bad.yaml": joinDocs(
			kindDoc("Workload", "a-typo", "spec:\n  deploymentTarget: []\n"), // line 6
			"apiVersion: v1\nkind: [\n"),                                     // line 8-9
		"platform.yaml": joinDocs(
			clusterTypeDoc("evil"), // kind on line 2
			workloadDoc("a-second", "dev"),
			envDoc("prod"),               // kind on line 21
			configMapDoc("evil-config")), // kind on line 28
	})
	repoB := newDir(t, map[string]string{"w.yaml": workloadDoc("b-good", "dev")})
	cp := newDir(t, map[string]string{
		"environments/dev/env.yaml": envDoc("dev"),
		"registrations.yaml": joinDocs(
			registrationDoc("a", urlA, "main", ".", "team-a"),
			registrationDoc("b", urlB, "main", ".", "team-b"),
		),
	})
	snap := load(t, cp, "dev", controlplane.Options{RepoMap: controlplane.RepoMap{urlA: repoA, urlB: repoB}})
	const platformHint = "platform objects belong in the control plane"
	checkDiags(t, snap.Diagnostics,
		want{file: "bad.yaml", line: 6, has: []string{urlA, "spec.deploymentTarget", `did you mean "deploymentTargets"?`}},
		want{file: "bad.yaml", line: 9, has: []string{urlA, "invalid YAML"}},
		want{file: "platform.yaml", line: 2, has: []string{urlA, "ClusterType/evil", "only hold Workload documents, not ClusterType", platformHint}},
		want{file: "platform.yaml", line: 21, has: []string{"Environment/prod", "not Environment", platformHint}},
		want{file: "platform.yaml", line: 28, has: []string{"ConfigMap/evil-config", "not ConfigMap", platformHint}},
	)
	for _, d := range snap.Diagnostics {
		if d.Repo != urlA {
			t.Errorf("diagnostic %v: repo %q, want %q", d, d.Repo, urlA)
		}
	}
	equal(t, "workloads", workloadNames(snap), []string{"a-good", "a-second", "b-good"})
	checkLoaded(t, snap, "WorkloadRegistration/a", "WorkloadRegistration/b", "Workload/a-good", "Workload/a-second", "Workload/b-good",
		"DeploymentTarget/a-good-dev", "DeploymentTarget/a-second-dev", "DeploymentTarget/b-good-dev")
	equal(t, "failed sources", snap.FailedSources, []string{"file/" + urlA + "/bad.yaml"})
}

// TestRegistrationCredentialsInURL: a registration URL's credentials are used to fetch, and
// never shown: not in diagnostics, sources or failed sources.
func TestRegistrationCredentialsInURL(t *testing.T) {
	t.Parallel()
	r := gittest.NewBare(t)
	r.Commit(t, "main", map[string]string{"w.yaml": workloadDoc("w", "dev"), "bad.yaml": "a: [\n"})
	setHead(t, r, "main")
	url := strings.Replace(gittest.ServeRepo(t, r), "http://", "http://user:s3cr3t@", 1)
	cp := newDir(t, map[string]string{
		"environments/dev/env.yaml": envDoc("dev"),
		"registrations.yaml":        registrationDoc("creds", url, "main", ".", "team"),
	})
	snap := load(t, cp, "dev", controlplane.Options{})
	if len(snap.Diagnostics) != 1 || snap.Diagnostics[0].File != "bad.yaml" || snap.Diagnostics[0].Line != 1 {
		t.Errorf("diagnostics = %v, want bad.yaml:1", snap.Diagnostics)
	}
	equal(t, "workloads", workloadNames(snap), []string{"w"})
	var shown []string
	for _, d := range snap.Diagnostics {
		shown = append(shown, d.Error(), d.Repo)
	}
	for _, w := range snap.Workloads {
		shown = append(shown, w.Source.Repo)
	}
	shown = append(shown, snap.FailedSources...)
	for _, s := range shown {
		if strings.Contains(s, "s3cr3t") {
			t.Errorf("credentials shown in %q", s)
		}
	}
	if len(snap.FailedSources) != 1 || !strings.Contains(snap.FailedSources[0], "***@") {
		t.Errorf("failed sources = %v", snap.FailedSources)
	}
}

// TestRegistrationSourceIgnore: a workload repository's .sourceignore and Flux's default
// exclusions apply to it.
func TestRegistrationSourceIgnore(t *testing.T) {
	t.Parallel()
	const url = "https://example.com/apps"
	repo := newDir(t, map[string]string{
		".sourceignore":              "drafts/\n",
		"apps/w.yaml":                workloadDoc("kept", "dev"),
		"apps/drafts/w.yaml":         workloadDoc("draft", "dev"),
		".github/workflows/ci.yaml":  "on: push\n",
		"apps/chart/values.yaml.tpl": "x",
		"apps/README.md":             "# apps",
	})
	cp := newDir(t, map[string]string{
		"environments/dev/env.yaml": envDoc("dev"),
		"registrations.yaml":        registrationDoc("apps", url, "main", "apps", "team"),
	})
	snap := load(t, cp, "dev", controlplane.Options{RepoMap: controlplane.RepoMap{url: repo}})
	requireNoDiags(t, snap)
	equal(t, "workloads", workloadNames(snap), []string{"kept"})
}

// TestRegistrationPathMissing: a registration whose folder is not in its repository (renamed,
// or mistyped) is an error on its path, and a failed source, so that what its workloads
// deployed is not removed as if the team had removed them; an existing folder without
// workloads is no error.
func TestRegistrationPathMissing(t *testing.T) {
	t.Parallel()
	const url = "https://example.com/apps"
	repo := newDir(t, map[string]string{
		"team-b/w.yaml":    workloadDoc("b", "dev"),
		"team-c/README.md": "# no workloads yet",
	})
	cp := newDir(t, map[string]string{
		"environments/dev/env.yaml": envDoc("dev"),
		"registrations.yaml": joinDocs(
			registrationDoc("a", url, "main", "./team-a", "team-a"),
			registrationDoc("b", url, "main", "./team-b", "team-b"),
			registrationDoc("c", url, "main", "./team-c", "team-c"),
		),
	})
	snap := load(t, cp, "dev", controlplane.Options{RepoMap: controlplane.RepoMap{url: repo}})
	checkDiags(t, snap.Diagnostics, want{sev: controlplane.SeverityError, file: "registrations.yaml", line: 9,
		has: []string{"WorkloadRegistration/a", "spec.workload.path", "has no folder ./team-a", "correct spec.workload.path"}})
	equal(t, "workloads", workloadNames(snap), []string{"b"})
	equal(t, "failed sources", snap.FailedSources, []string{"registration/a"})
}

// TestRegistrationInEnvironmentContent: a registration may live in an environment's own
// content; it is read for that environment only.
func TestRegistrationInEnvironmentContent(t *testing.T) {
	t.Parallel()
	const url = "https://example.com/apps"
	repo := newDir(t, map[string]string{"w.yaml": workloadDoc("w", "dev")})
	cp := newDir(t, map[string]string{
		"environments/dev/env.yaml":   envDoc("dev"),
		"environments/dev/reg.yaml":   registrationDoc("apps", url, "main", ".", "team"),
		"environments/stage/env.yaml": envDoc("stage"),
	})
	opts := controlplane.Options{RepoMap: controlplane.RepoMap{url: repo}}
	equal(t, "dev workloads", workloadNames(load(t, cp, "dev", opts)), []string{"w"})
	equal(t, "stage workloads", workloadNames(load(t, cp, "stage", opts)), nil)
}

// TestRegistrationUnreachableFetchedOnce: an unreachable registration repository is fetched
// (and logged) once per opened control plane, not once per environment loaded; every
// environment still reports it.
func TestRegistrationUnreachableFetchedOnce(t *testing.T) {
	t.Parallel()
	down := gittest.ClosedURL(t) + "/repo.git"
	cp := newDir(t, map[string]string{
		"environments/dev/env.yaml":   envDoc("dev"),
		"environments/stage/env.yaml": envDoc("stage"),
		"environments/prod/env.yaml":  envDoc("prod"),
		"registrations.yaml":          registrationDoc("down", down, "main", ".", "team"),
	})
	var logs syncBuffer
	c := open(t, cp, controlplane.Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	for _, env := range []string{"dev", "stage", "prod"} {
		snap, err := c.Load(t.Context(), env)
		if err != nil {
			t.Fatal(err)
		}
		equal(t, env+" failed sources", snap.FailedSources, []string{"registration/down"})
	}
	if n := strings.Count(logs.String(), "fetching repository"); n != 1 {
		t.Errorf("logged %d fetches of the unreachable repository, want 1:\n%s", n, logs.String())
	}
}

// syncBuffer is a bytes.Buffer safe for concurrent writes.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// TestRegistrationOfTheHelloWorldExample: the hello-world example's source repository can be
// registered as it is (path .): its .sourceignore keeps the chart and fleetform-app.yaml,
// which fleetform app reads, out of the control plane.
func TestRegistrationOfTheHelloWorldExample(t *testing.T) {
	t.Parallel()
	const url = "https://example.com/hello-world"
	src := filepath.Join(gittest.ModuleRoot(t), "examples", "apps", "hello-world", "source")
	cp := newDir(t, map[string]string{
		"environments/dev/env.yaml": envDoc("dev"),
		"registrations.yaml":        registrationDoc("hello-world", url, "", ".", "apps"),
	})
	snap := load(t, cp, "dev", controlplane.Options{RepoMap: controlplane.RepoMap{url: src}})
	requireNoDiags(t, snap)
	if w := registered(t, snap, "hello-world"); w.Workspace != "apps" {
		t.Errorf("workload hello-world: workspace %q", w.Workspace)
	}
}
