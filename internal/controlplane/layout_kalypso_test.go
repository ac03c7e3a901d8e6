package controlplane_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/fleetform/fleetform/internal/controlplane"
	"github.com/fleetform/fleetform/internal/testutil/gittest"
)

func TestKalypsoFixtureEnvironments(t *testing.T) {
	t.Parallel()
	k := gittest.NewKalypso(t)
	cp := open(t, k.ControlPlane.Dir, controlplane.Options{RepoMap: k.RepoMap})
	envs, diags, err := cp.Environments(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	checkDiags(t, diags)
	var names []string
	for _, e := range envs {
		names = append(names, e.Name)
		if e.Object == nil || e.Object.Spec.ControlPlane.Branch != e.Name || e.Object.Source.File != ".environments/"+e.Name+".yaml" {
			t.Errorf("environment %s: object %+v", e.Name, e.Object)
		}
	}
	equal(t, "environments", names, []string{"dev", "stage"})
}

func TestKalypsoFixtureDev(t *testing.T) {
	t.Parallel()
	k := gittest.NewKalypso(t)
	snap := load(t, k.ControlPlane.Dir, "dev", controlplane.Options{RepoMap: k.RepoMap})
	requireNoDiags(t, snap)
	equal(t, "cluster types", clusterTypeNames(snap), []string{"command-center", "drone", "large", "small"})
	equal(t, "templates", templateNames(snap), []string{"arc-flux", "argocd", "configmap", "default"})
	var cms []string
	for _, cm := range snap.ConfigMaps {
		cms = append(cms, cm.Metadata.Name)
	}
	slices.Sort(cms)
	equal(t, "config maps", cms, []string{"center-config", "dev-config", "drone-config", "east-us-config",
		"large-config", "restricted-config", "small-config", "west-us-config"})
	if len(snap.SchedulingPolicies) != 1 || snap.SchedulingPolicies[0].Metadata.Name != "observability-policy" {
		t.Errorf("policies = %v", loaded(snap))
	}
	if snap.GitOpsRepo == nil || snap.GitOpsRepo.Metadata.Name != "dev" || snap.GitOpsRepo.Spec.Branch != "dev" {
		t.Errorf("GitOpsRepo = %+v", snap.GitOpsRepo)
	}
	if snap.BaseRepo == nil || snap.BaseRepo.Spec.Commit != k.Main.String() || snap.BaseRepo.Source.File != "base-repo.yaml" {
		t.Errorf("BaseRepo = %+v", snap.BaseRepo)
	}
	if snap.EnvironmentObject == nil || snap.EnvironmentObject.Metadata.Name != "dev" {
		t.Errorf("Environment = %+v", snap.EnvironmentObject)
	}
	devTip := resolve(t, k.ControlPlane, "dev")
	if want := (controlplane.Revisions{Environment: devTip, Common: k.Main.String(), Pinned: true}); snap.Revisions != want {
		t.Errorf("revisions = %+v, want %+v", snap.Revisions, want)
	}
	// Common content comes from main, environment content from the dev branch.
	for _, tpl := range snap.Templates {
		if tpl.Source.Commit != k.Main.String() || !strings.HasPrefix(tpl.Source.File, "templates/") {
			t.Errorf("template %s read from %s@%s", tpl.Metadata.Name, tpl.Source.File, tpl.Source.Commit)
		}
	}
	for _, ct := range snap.ClusterTypes {
		if ct.Source.Commit != devTip || !strings.HasPrefix(ct.Source.File, "cluster-types/") {
			t.Errorf("cluster type %s read from %s@%s", ct.Metadata.Name, ct.Source.File, ct.Source.Commit)
		}
	}
	if len(snap.Workloads) != 1 {
		t.Fatalf("workloads = %v", loaded(snap))
	}
	w := snap.Workloads[0]
	if w.Metadata.Name != "observability" || w.Registration != "platform-svc" || w.Workspace != "platform-team" ||
		w.Source.Repo != gittest.SvcSrcURL || w.Source.File != "workloads/observability.yaml" || w.Source.Line != 1 {
		t.Errorf("workload = %s registration %q workspace %q source %+v", w.Metadata.Name, w.Registration, w.Workspace, w.Source)
	}
	equal(t, "deployment targets", targetNames(snap), []string{"observability-prometheus"})
	if dt := snap.DeploymentTargets[0]; dt.Environment != "dev" || dt.Registration != "platform-svc" || dt.Labels["type"] != "service" {
		t.Errorf("deployment target = %+v", dt)
	}
	if len(snap.FailedSources) != 0 {
		t.Errorf("failed sources = %v", snap.FailedSources)
	}
}

func TestKalypsoFixtureStage(t *testing.T) {
	t.Parallel()
	k := gittest.NewKalypso(t)
	snap := load(t, k.ControlPlane.Dir, "stage", controlplane.Options{RepoMap: k.RepoMap})
	requireNoDiags(t, snap)
	equal(t, "cluster types", clusterTypeNames(snap), []string{"drone", "large"})
	equal(t, "templates", templateNames(snap), []string{"arc-flux", "argocd", "configmap", "default"})
	if len(snap.SchedulingPolicies) != 0 {
		t.Errorf("stage has no policy, got %d", len(snap.SchedulingPolicies))
	}
	if snap.GitOpsRepo == nil || snap.GitOpsRepo.Spec.Branch != "stage" {
		t.Errorf("GitOpsRepo = %+v", snap.GitOpsRepo)
	}
	var cms []string
	for _, cm := range snap.ConfigMaps {
		cms = append(cms, cm.Metadata.Name)
	}
	if !slices.Contains(cms, "stage-config") || slices.Contains(cms, "dev-config") {
		t.Errorf("config maps = %v", cms)
	}
	// Deployment targets of every environment are kept; scheduling keeps stage's.
	equal(t, "deployment targets", targetNames(snap), []string{"observability-prometheus"})
	if snap.DeploymentTargets[0].Environment != "dev" {
		t.Errorf("target environment = %q", snap.DeploymentTargets[0].Environment)
	}
	if want := (controlplane.Revisions{Environment: resolve(t, k.ControlPlane, "stage"), Common: k.Main.String(), Pinned: true}); snap.Revisions != want {
		t.Errorf("revisions = %+v, want %+v", snap.Revisions, want)
	}
}

// kalypsoRepo is a small Kalypso-layout control plane: main holds a template and the
// .environments declarations, each environment branch a cluster type and a pin.
type kalypsoRepo struct {
	repo *gittest.Repo
	main plumbing.Hash
}

func newKalypsoRepo(t *testing.T, bare bool) *kalypsoRepo {
	t.Helper()
	r := gittest.New(t)
	if bare {
		r = gittest.NewBare(t)
	}
	main := r.Commit(t, "main", map[string]string{
		".environments/dev.yaml":   envBranchDoc("dev", "dev"),
		".environments/stage.yaml": envBranchDoc("stage", "stage"),
		".sourceignore":            ".environments/\n",
		"templates/a.yaml":         templateDoc("a"),
	})
	for _, env := range []string{"dev", "stage"} {
		r.Commit(t, env, map[string]string{
			"base-repo.yaml":     baseRepoDoc(main.String()),
			"cluster-types.yaml": clusterTypeDoc(env + "-ct"),
		})
	}
	setHead(t, r, "main")
	return &kalypsoRepo{repo: r, main: main}
}

func envBranchDoc(name, branch string) string {
	return kindDoc("Environment", name, "spec:\n  controlPlane:\n    repo: https://example.com/control-plane\n    branch: "+branch+"\n    path: .\n")
}

func setHead(t *testing.T, r *gittest.Repo, branch string) {
	t.Helper()
	ref := plumbing.NewSymbolicReference(plumbing.HEAD, plumbing.NewBranchReferenceName(branch))
	if err := r.Git.Storer.SetReference(ref); err != nil {
		t.Fatal(err)
	}
}

func resolve(t *testing.T, r *gittest.Repo, ref string) string {
	t.Helper()
	h, err := r.Git.ResolveRevision(plumbing.Revision(ref))
	if err != nil {
		t.Fatalf("resolve %s: %v", ref, err)
	}
	return h.String()
}

func TestKalypsoBareRepository(t *testing.T) {
	t.Parallel()
	k := newKalypsoRepo(t, true)
	cp := open(t, k.repo.Dir, controlplane.Options{})
	if cp.Layout() != controlplane.LayoutKalypso {
		t.Fatalf("layout = %q, want kalypso", cp.Layout())
	}
	snap, err := cp.Load(t.Context(), "stage")
	if err != nil {
		t.Fatal(err)
	}
	requireNoDiags(t, snap)
	checkLoaded(t, snap, "BaseRepo/main", "ClusterType/stage-ct", "Template/a")
}

func TestKalypsoFileURL(t *testing.T) {
	t.Parallel()
	k := newKalypsoRepo(t, false)
	snap := load(t, k.repo.URL(), "dev", controlplane.Options{})
	requireNoDiags(t, snap)
	checkLoaded(t, snap, "BaseRepo/main", "ClusterType/dev-ct", "Template/a")
}

// TestKalypsoBranchFromEnvironment: the environment's branch is the one its Environment
// names, not the one named like the environment.
func TestKalypsoBranchFromEnvironment(t *testing.T) {
	t.Parallel()
	k := newKalypsoRepo(t, false)
	k.repo.Commit(t, "main", map[string]string{
		".environments/dev.yaml":   envBranchDoc("dev", "environments/dev-2024"),
		".environments/stage.yaml": envBranchDoc("stage", "stage"),
		"templates/a.yaml":         templateDoc("a"),
	})
	k.repo.Commit(t, "environments/dev-2024", map[string]string{"cts.yaml": clusterTypeDoc("from-named-branch")})
	snap := load(t, k.repo.Dir, "dev", controlplane.Options{})
	requireNoDiags(t, snap)
	equal(t, "cluster types", clusterTypeNames(snap), []string{"from-named-branch"})
	if snap.Revisions.Environment != resolve(t, k.repo, "environments/dev-2024") || snap.Revisions.Pinned {
		t.Errorf("revisions = %+v", snap.Revisions)
	}
}

func TestKalypsoMissingBranch(t *testing.T) {
	t.Parallel()
	k := newKalypsoRepo(t, false)
	k.repo.Commit(t, "main", map[string]string{".environments/prod.yaml": envBranchDoc("prod", "prod")})
	_, err := open(t, k.repo.Dir, controlplane.Options{}).Load(t.Context(), "prod")
	if err == nil || !strings.Contains(err.Error(), `branch "prod"`) {
		t.Fatalf("err = %v, want it to name branch prod", err)
	}
}

// TestKalypsoPinnedCommitMissing: a pin naming a commit the repository does not have fails
// the load with the commit and the line of base-repo.yaml that pins it.
func TestKalypsoPinnedCommitMissing(t *testing.T) {
	t.Parallel()
	k := newKalypsoRepo(t, false)
	const missing = "0123456789abcdef0123456789abcdef01234567"
	k.repo.Commit(t, "dev", map[string]string{"base-repo.yaml": baseRepoDoc(missing), "cts.yaml": clusterTypeDoc("x")})
	_, err := open(t, k.repo.Dir, controlplane.Options{}).Load(t.Context(), "dev")
	if err == nil {
		t.Fatal("Load succeeded with a missing pinned commit")
	}
	for _, s := range []string{"base-repo.yaml:9", "spec.commit", "pinned commit " + missing} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("error %q does not contain %q", err, s)
		}
	}
}

// TestKalypsoPinVersusTip: an environment pinned to an older main commit sees main as it
// was at that commit, while Environment declarations are always read at main's tip.
func TestKalypsoPinVersusTip(t *testing.T) {
	t.Parallel()
	k := newKalypsoRepo(t, false)
	// A newer main: an extra template, and dev's declaration now names another branch.
	newer := k.repo.Commit(t, "main", map[string]string{
		".environments/dev.yaml":   envBranchDoc("dev", "dev-next"),
		".environments/stage.yaml": envBranchDoc("stage", "stage"),
		".sourceignore":            ".environments/\n",
		"templates/a.yaml":         templateDoc("a"),
		"templates/extra.yaml":     templateDoc("extra"),
	})
	k.repo.Commit(t, "dev-next", map[string]string{"base-repo.yaml": baseRepoDoc(k.main.String()), "cts.yaml": clusterTypeDoc("next")})
	k.repo.Commit(t, "stage", map[string]string{"base-repo.yaml": baseRepoDoc(newer.String()), "cts.yaml": clusterTypeDoc("stage-ct")})

	dev := load(t, k.repo.Dir, "dev", controlplane.Options{})
	requireNoDiags(t, dev)
	equal(t, "dev templates (pinned to the older main)", templateNames(dev), []string{"a"})
	equal(t, "dev cluster types (declaration at the tip)", clusterTypeNames(dev), []string{"next"})
	if dev.Revisions.Common != k.main.String() || !dev.Revisions.Pinned {
		t.Errorf("dev revisions = %+v", dev.Revisions)
	}
	if dev.EnvironmentObject.Spec.ControlPlane.Branch != "dev-next" || dev.EnvironmentObject.Source.Commit != newer.String() {
		t.Errorf("dev Environment read from %s: %+v", dev.EnvironmentObject.Source.Commit, dev.EnvironmentObject.Spec)
	}

	stage := load(t, k.repo.Dir, "stage", controlplane.Options{})
	requireNoDiags(t, stage)
	equal(t, "stage templates", templateNames(stage), []string{"a", "extra"})

	// A short pin resolves to the same commit.
	k.repo.Commit(t, "stage", map[string]string{"base-repo.yaml": baseRepoDoc(k.main.String()[:12]), "cts.yaml": clusterTypeDoc("stage-ct")})
	stage = load(t, k.repo.Dir, "stage", controlplane.Options{})
	requireNoDiags(t, stage)
	equal(t, "stage templates at a short pin", templateNames(stage), []string{"a"})
	if stage.Revisions.Common != k.main.String() {
		t.Errorf("short pin resolved to %s, want %s", stage.Revisions.Common, k.main)
	}
}

// TestKalypsoUnpinned: without base-repo.yaml common content is read at main's tip.
func TestKalypsoUnpinned(t *testing.T) {
	t.Parallel()
	k := newKalypsoRepo(t, false)
	k.repo.Commit(t, "dev", map[string]string{"cts.yaml": clusterTypeDoc("x")})
	tip := k.repo.Commit(t, "main", map[string]string{
		".environments/dev.yaml": envBranchDoc("dev", "dev"),
		"templates/b.yaml":       templateDoc("b"),
	})
	snap := load(t, k.repo.Dir, "dev", controlplane.Options{})
	requireNoDiags(t, snap)
	equal(t, "templates", templateNames(snap), []string{"b"})
	if want := (controlplane.Revisions{Environment: resolve(t, k.repo, "dev"), Common: tip.String()}); snap.Revisions != want {
		t.Errorf("revisions = %+v, want %+v", snap.Revisions, want)
	}
}

// TestKalypsoCommonRef: --common-ref replaces the pin; a bad one is blamed on itself.
func TestKalypsoCommonRef(t *testing.T) {
	t.Parallel()
	k := newKalypsoRepo(t, false)
	newer := k.repo.Commit(t, "main", map[string]string{
		".environments/dev.yaml": envBranchDoc("dev", "dev"),
		"templates/a.yaml":       templateDoc("a"),
		"templates/extra.yaml":   templateDoc("extra"),
	})
	snap := load(t, k.repo.Dir, "dev", controlplane.Options{CommonRef: "main"})
	requireNoDiags(t, snap)
	equal(t, "templates", templateNames(snap), []string{"a", "extra"})
	if snap.Revisions.Common != newer.String() || !snap.Revisions.Pinned {
		t.Errorf("revisions = %+v", snap.Revisions)
	}
	_, err := open(t, k.repo.Dir, controlplane.Options{CommonRef: "no-such-ref"}).Load(t.Context(), "dev")
	if err == nil || !strings.Contains(err.Error(), "no-such-ref") || strings.Contains(err.Error(), "base-repo.yaml") {
		t.Errorf("err = %v, want it to name the --common-ref and not base-repo.yaml", err)
	}
}

// TestKalypsoRef: --ref names the main branch: the environments it declares and the common
// content of unpinned environments.
func TestKalypsoRef(t *testing.T) {
	t.Parallel()
	k := newKalypsoRepo(t, false)
	k.repo.Commit(t, "release", map[string]string{
		".environments/prod.yaml": envBranchDoc("prod", "prod"),
		"templates/r.yaml":        templateDoc("r"),
	})
	k.repo.Commit(t, "prod", map[string]string{"cts.yaml": clusterTypeDoc("prod-ct")})
	cp := open(t, k.repo.Dir, controlplane.Options{Ref: "release", Layout: controlplane.LayoutKalypso})
	envs, _, err := cp.Environments(t.Context())
	if err != nil || len(envs) != 1 || envs[0].Name != "prod" {
		t.Fatalf("environments = %+v, %v", envs, err)
	}
	snap, err := cp.Load(t.Context(), "prod")
	if err != nil {
		t.Fatal(err)
	}
	requireNoDiags(t, snap)
	checkLoaded(t, snap, "ClusterType/prod-ct", "Template/r")
	if _, err := cp.Load(t.Context(), "dev"); err == nil || !strings.Contains(err.Error(), `"dev" is not declared; declared: prod`) {
		t.Errorf("Load(dev) err = %v", err)
	}
}

// TestKalypsoBrokenEnvironmentDeclaration: an environment whose declaration does not decode
// is not declared, and the error says why.
func TestKalypsoBrokenEnvironmentDeclaration(t *testing.T) {
	t.Parallel()
	k := newKalypsoRepo(t, false)
	k.repo.Commit(t, "main", map[string]string{
		".environments/dev.yaml":   kindDoc("Environment", "dev", "spec:\n  controlPlan: {branch: dev}\n"),
		".environments/stage.yaml": envBranchDoc("stage", "stage"),
		".environments/notes.yaml": templateDoc("stray"),
	})
	cp := open(t, k.repo.Dir, controlplane.Options{})
	_, diags, err := cp.Environments(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	checkDiags(t, diags,
		want{file: ".environments/dev.yaml", line: 6, has: []string{"spec.controlPlan", `did you mean "controlPlane"?`}},
		want{sev: controlplane.SeverityWarning, file: ".environments/notes.yaml", line: 2, has: []string{"not read: only Environment documents are read in .environments/"}},
	)
	_, err = cp.Load(t.Context(), "dev")
	if err == nil || !strings.Contains(err.Error(), `"dev" is not declared; declared: stage`) ||
		!strings.Contains(err.Error(), ".environments/dev.yaml:6") {
		t.Errorf("err = %v, want it to say dev is not declared and why", err)
	}
	stage, err := cp.Load(t.Context(), "stage")
	if err != nil {
		t.Fatal(err)
	}
	// The declarations' problems are reported with every environment of the Kalypso layout:
	// which environment a broken declaration meant cannot be known.
	checkDiags(t, stage.Diagnostics,
		want{file: ".environments/dev.yaml", line: 6, has: []string{"spec.controlPlan"}},
		want{sev: controlplane.SeverityWarning, file: ".environments/notes.yaml", line: 2, has: []string{"only Environment documents"}},
	)
}

// TestKalypsoEnvironmentsFolderHoldsOtherFiles: a real control plane keeps onboarding
// playbooks (YAML lists) and other tools' objects under .environments/. .sourceignore
// applies there (main's own ".environments/" entry excepted: that folder is still where the
// environments are), and what is left that is not an Environment is a warning.
func TestKalypsoEnvironmentsFolderHoldsOtherFiles(t *testing.T) {
	t.Parallel()
	k := newKalypsoRepo(t, false)
	k.repo.Commit(t, "main", map[string]string{
		".sourceignore":                        ".github/\n.environments/\n.onboard/\n",
		".environments/dev.yaml":               envBranchDoc("dev", "dev"),
		".environments/.onboard/onboard.yml":   "- hosts: localhost\n  tasks:\n    - name: cron\n      cron: {name: x}\n",
		".environments/.onboard/provider.yaml": "apiVersion: azconfig.io/v1\nkind: AzureAppConfigurationProvider\nmetadata: {name: p}\n",
		".environments/list.yaml":              "- a\n- b\n",
		".environments/provider.yaml":          "apiVersion: azconfig.io/v1\nkind: AzureAppConfigurationProvider\nmetadata: {name: p}\nspec: {}\n",
	})
	cp := open(t, k.repo.Dir, controlplane.Options{})
	envs, diags, err := cp.Environments(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if len(envs) != 1 || envs[0].Name != "dev" {
		t.Errorf("environments = %+v, want dev", envs)
	}
	if controlplane.HasErrors(diags) {
		t.Errorf("errors in .environments/: %v", diags)
	}
	var files []string
	for _, d := range diags {
		files = append(files, d.File)
	}
	slices.Sort(files)
	equal(t, "files warned about", files, []string{".environments/list.yaml", ".environments/provider.yaml"})
	if _, err := cp.Load(t.Context(), "dev"); err != nil {
		t.Errorf("Load(dev): %v", err)
	}
}

func TestKalypsoLayoutNeedsGit(t *testing.T) {
	t.Parallel()
	dir := newDir(t, map[string]string{".environments/dev.yaml": envDoc("dev")})
	_, err := controlplane.Open(t.Context(), dir, controlplane.Options{Layout: controlplane.LayoutKalypso})
	if err == nil || !strings.Contains(err.Error(), "needs a git repository") {
		t.Errorf("err = %v", err)
	}
}

func TestLayoutDetection(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		files map[string]string // committed on main, or written to a directory when dir is set
		dir   bool
		want  controlplane.Layout
	}{
		{name: "git with .environments", files: map[string]string{".environments/dev.yaml": envDoc("dev")}, want: controlplane.LayoutKalypso},
		{name: "git with environments", files: map[string]string{"environments/dev/env.yaml": envDoc("dev")}, want: controlplane.LayoutFolder},
		{name: "git with both", files: map[string]string{".environments/dev.yaml": envDoc("dev"), "environments/dev/a.yaml": envDoc("dev")}, want: controlplane.LayoutFolder},
		{name: "git with neither", files: map[string]string{"a.yaml": templateDoc("a")}, want: controlplane.LayoutFolder},
		{name: "directory with .environments", files: map[string]string{".environments/dev.yaml": envDoc("dev")}, dir: true, want: controlplane.LayoutFolder},
		{name: "empty directory", files: map[string]string{}, dir: true, want: controlplane.LayoutFolder},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			loc := ""
			if tt.dir {
				loc = newDir(t, tt.files)
			} else {
				r := gittest.New(t)
				r.Commit(t, "main", tt.files)
				setHead(t, r, "main")
				loc = r.Dir
			}
			if got := open(t, loc, controlplane.Options{}).Layout(); got != tt.want {
				t.Errorf("layout = %q, want %q", got, tt.want)
			}
		})
	}
}

// TestKalypsoEnvironmentInContent: Environments are declared in .environments/ on main only;
// one anywhere else is ignored with a warning.
func TestKalypsoEnvironmentInContent(t *testing.T) {
	t.Parallel()
	k := newKalypsoRepo(t, false)
	k.repo.Commit(t, "dev", map[string]string{"base-repo.yaml": baseRepoDoc(k.main.String()), "prod.yaml": envBranchDoc("prod", "prod")})
	snap := load(t, k.repo.Dir, "dev", controlplane.Options{})
	checkDiags(t, snap.Diagnostics, want{sev: controlplane.SeverityWarning, file: "prod.yaml", line: 2,
		has: []string{`Environment "prod" is ignored`, ".environments/"}})
	checkLoaded(t, snap, "BaseRepo/main", "Template/a")
}

// TestKalypsoEveryBaseRepoContributes: besides main's pin, an environment branch may hold
// other BaseRepos (a repository of values shared by every environment, say); each one's
// content, read at its commit (or branch) through the repo map, is common content of the
// environment, and provenance names its repository.
func TestKalypsoEveryBaseRepoContributes(t *testing.T) {
	t.Parallel()
	const globalURL = "https://example.com/control-plane-global"
	global := gittest.New(t)
	v1 := global.Commit(t, "main", map[string]string{
		"configs/global.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: global-config\n  labels: {platform-config: \"true\"}\ndata:\n  REGION: v1\n",
	})
	global.Commit(t, "main", map[string]string{ // the tip moves on; dev pins v1
		"configs/global.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: global-config\n  labels: {platform-config: \"true\"}\ndata:\n  REGION: v2\n",
	})
	k := newKalypsoRepo(t, false)
	k.repo.Commit(t, "dev", map[string]string{
		"base-repo.yaml":     baseRepoDoc(k.main.String()),
		"cluster-types.yaml": clusterTypeDoc("dev-ct"),
		"global-repo.yaml":   kindDoc("BaseRepo", "global", "spec: {repo: "+globalURL+", branch: main, path: ./configs, commit: "+v1.String()+"}\n"),
	})
	k.repo.Commit(t, "stage", map[string]string{
		"base-repo.yaml":     baseRepoDoc(k.main.String()),
		"cluster-types.yaml": clusterTypeDoc("stage-ct"),
		"global-repo.yaml":   kindDoc("BaseRepo", "global", "spec: {repo: "+globalURL+", branch: main, path: ./configs}\n"),
	})
	opts := controlplane.Options{RepoMap: controlplane.RepoMap{globalURL: global.Dir}}
	for env, want := range map[string]string{"dev": "v1", "stage": "v2"} {
		snap := load(t, k.repo.Dir, env, opts)
		requireNoDiags(t, snap)
		checkLoaded(t, snap, "BaseRepo/main", "ClusterType/"+env+"-ct", "ConfigMap/global-config", "Template/a")
		cm := snap.ConfigMaps[0]
		if cm.Data["REGION"] != want || cm.Source.Repo != globalURL || cm.Source.File != "configs/global.yaml" {
			t.Errorf("%s: global-config %v from %+v, want REGION %s from %s", env, cm.Data, cm.Source, want, globalURL)
		}
		if snap.BaseRevisions["global"] == "" || snap.Revisions.Common != k.main.String() {
			t.Errorf("%s: revisions %+v, base revisions %v", env, snap.Revisions, snap.BaseRevisions)
		}
	}
	if got := load(t, k.repo.Dir, "dev", opts).BaseRevisions["global"]; got != v1.String() {
		t.Errorf("dev read global at %s, want the pinned %s", got, v1)
	}
}

// TestBaseRepoUnreadable: a BaseRepo whose repository or commit cannot be read is an error
// located at the field, and every assignment is held back (its values would be missing).
func TestBaseRepoUnreadable(t *testing.T) {
	t.Parallel()
	global := gittest.New(t)
	global.Commit(t, "main", map[string]string{"c.yaml": configMapDoc("x")})
	for name, tc := range map[string]struct {
		spec string
		line int
		has  string
	}{
		"unmapped repository": {"spec: {repo: /no/such/repository, branch: main, path: .}\n", 5, "spec.repo"},
		"unknown commit":      {"spec: {repo: " + global.Dir + ", branch: main, path: ., commit: 0123456789abcdef0123456789abcdef01234567}\n", 5, "spec.commit"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			snap := loadFolder(t, map[string]string{"environments/dev/global.yaml": kindDoc("BaseRepo", "global", tc.spec)})
			checkDiags(t, snap.Diagnostics, want{file: "environments/dev/global.yaml", line: tc.line,
				has: []string{"BaseRepo/global", tc.has, `cannot read the content of BaseRepo "global"`}})
			if len(snap.Broken) != 1 || snap.Broken[0].LabelsKnown {
				t.Errorf("broken = %+v, want the BaseRepo, applying to every assignment", snap.Broken)
			}
		})
	}
}
