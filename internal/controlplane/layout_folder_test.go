package controlplane_test

import (
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/fleetform/fleetform/internal/controlplane"
	"github.com/fleetform/fleetform/internal/testutil/gittest"
)

// TestStrictDecodingInEnvironmentFolder: a broken file in the environment's own folder is
// reported once, and a broken file in another environment's folder is not this
// environment's problem.
func TestStrictDecodingInEnvironmentFolder(t *testing.T) {
	t.Parallel()
	snap := loadFolder(t, map[string]string{
		"environments/dev/cts.yaml":    joinDocs(clusterTypeDoc("large"), "kind: ClusterType\napiVersion: scheduler.kalypso.io/v1alpha1\nmetadata: {name: [\n"),
		"environments/stage/env.yaml":  envDoc("stage"),
		"environments/stage/cts.yaml":  "a: [\n",
		"environments/stage/more.yaml": kindDoc("ClusterType", "x", "spec:\n  reconcilr: a\n"),
	})
	checkDiags(t, snap.Diagnostics, want{file: "environments/dev/cts.yaml", line: 12, has: []string{"invalid YAML"}})
	checkLoaded(t, snap, "ClusterType/large")
}

func TestFolderDirectory(t *testing.T) {
	t.Parallel()
	dir := newDir(t, map[string]string{
		"templates/a.yaml":               templateDoc("a"),
		"workloads/shop.yaml":            workloadDoc("shop", "dev", "stage"),
		"environments/dev/env.yaml":      envDoc("dev"),
		"environments/dev/ct.yaml":       clusterTypeDoc("dev-ct"),
		"environments/stage/ct.yaml":     clusterTypeDoc("stage-ct"),
		"environments/stage/deep/x.yaml": configMapDoc("stage-cm"),
		"README.md":                      "# not YAML",
	})
	cp := open(t, dir, controlplane.Options{})
	if cp.Layout() != controlplane.LayoutFolder || cp.Repo().IsGit() {
		t.Fatalf("layout = %q, git = %v", cp.Layout(), cp.Repo().IsGit())
	}
	envs, diags, err := cp.Environments(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	checkDiags(t, diags)
	if len(envs) != 2 || envs[0].Name != "dev" || envs[0].Object == nil || envs[1].Name != "stage" || envs[1].Object != nil {
		t.Errorf("environments = %+v", envs)
	}

	dev, err := cp.Load(t.Context(), "dev")
	if err != nil {
		t.Fatal(err)
	}
	requireNoDiags(t, dev)
	checkLoaded(t, dev, "ClusterType/dev-ct", "Template/a", "Workload/shop", "DeploymentTarget/shop-dev", "DeploymentTarget/shop-stage")
	if dev.Revisions != (controlplane.Revisions{}) || dev.EnvironmentObject == nil {
		t.Errorf("revisions = %+v, environment = %v", dev.Revisions, dev.EnvironmentObject)
	}

	stage, err := cp.Load(t.Context(), "stage")
	if err != nil {
		t.Fatal(err)
	}
	requireNoDiags(t, stage)
	checkLoaded(t, stage, "ClusterType/stage-ct", "ConfigMap/stage-cm", "Template/a", "Workload/shop", "DeploymentTarget/shop-dev", "DeploymentTarget/shop-stage")
	if stage.EnvironmentObject != nil || stage.Precedence() != "layered" {
		t.Errorf("stage Environment = %v, precedence %q", stage.EnvironmentObject, stage.Precedence())
	}

	if _, err := cp.Load(t.Context(), "prod"); err == nil || !strings.Contains(err.Error(), `environment "prod" is not declared; declared: dev, stage`) {
		t.Errorf("Load(prod) err = %v", err)
	}
}

// TestFolderDirectoryIgnoresPin: a plain directory has no history, so a pin cannot apply;
// common content is read as it is.
func TestFolderDirectoryIgnoresPin(t *testing.T) {
	t.Parallel()
	snap := loadFolder(t, map[string]string{
		"environments/dev/base-repo.yaml": baseRepoDoc("0123456789abcdef0123456789abcdef01234567"),
		"templates/a.yaml":                templateDoc("a"),
	})
	checkLoaded(t, snap, "BaseRepo/main", "Template/a")
	if snap.Revisions.Pinned {
		t.Errorf("revisions = %+v, want unpinned", snap.Revisions)
	}
	checkDiags(t, snap.Diagnostics, want{sev: controlplane.SeverityWarning, file: "environments/dev/base-repo.yaml", line: 9,
		has: []string{"not a git repository", "common content is read as it is"}})
}

// folderRepo is a folder-layout git repository with two commits on main: the older one
// with template a and dev's cluster type old, the newer one with templates a and b, dev's
// cluster type new, and (when pin) environments/dev/base-repo.yaml pinning the older commit.
type folderRepo struct {
	repo         *gittest.Repo
	older, newer plumbing.Hash
}

func newFolderRepo(t *testing.T, bare, pin bool) *folderRepo {
	t.Helper()
	r := gittest.New(t)
	if bare {
		r = gittest.NewBare(t)
	}
	older := r.Commit(t, "main", map[string]string{
		"templates/a.yaml":          templateDoc("a"),
		"environments/dev/env.yaml": envDoc("dev"),
		"environments/dev/ct.yaml":  clusterTypeDoc("old"),
	})
	files := map[string]string{
		"templates/a.yaml":          templateDoc("a"),
		"templates/b.yaml":          templateDoc("b"),
		"environments/dev/env.yaml": envDoc("dev"),
		"environments/dev/ct.yaml":  clusterTypeDoc("new"),
	}
	if pin {
		files["environments/dev/base-repo.yaml"] = baseRepoDoc(older.String())
	}
	newer := r.Commit(t, "main", files)
	setHead(t, r, "main")
	return &folderRepo{repo: r, older: older, newer: newer}
}

// TestFolderGitPinned: in a git repository the environment's folder is read at the tip and
// the common content at the commit environments/<env>/base-repo.yaml pins.
func TestFolderGitPinned(t *testing.T) {
	t.Parallel()
	for _, bare := range []bool{false, true} {
		t.Run(map[bool]string{false: "worktree", true: "bare"}[bare], func(t *testing.T) {
			t.Parallel()
			f := newFolderRepo(t, bare, true)
			snap := load(t, f.repo.Dir, "dev", controlplane.Options{})
			requireNoDiags(t, snap)
			checkLoaded(t, snap, "BaseRepo/main", "ClusterType/new", "Template/a")
			if want := (controlplane.Revisions{Environment: f.newer.String(), Common: f.older.String(), Pinned: true}); snap.Revisions != want {
				t.Errorf("revisions = %+v, want %+v", snap.Revisions, want)
			}
			if src := snap.Templates[0].Source; src.Commit != f.older.String() {
				t.Errorf("template read at %s, want the pin %s", src.Commit, f.older)
			}
			if src := snap.ClusterTypes[0].Source; src.Commit != f.newer.String() {
				t.Errorf("cluster type read at %s, want the tip %s", src.Commit, f.newer)
			}
		})
	}
}

func TestFolderGitUnpinned(t *testing.T) {
	t.Parallel()
	f := newFolderRepo(t, false, false)
	snap := load(t, f.repo.Dir, "dev", controlplane.Options{})
	requireNoDiags(t, snap)
	checkLoaded(t, snap, "ClusterType/new", "Template/a", "Template/b")
	if want := (controlplane.Revisions{Environment: f.newer.String(), Common: f.newer.String()}); snap.Revisions != want {
		t.Errorf("revisions = %+v, want %+v", snap.Revisions, want)
	}
}

// TestFolderGitRef: --ref moves the tip; common content follows it when unpinned.
func TestFolderGitRef(t *testing.T) {
	t.Parallel()
	f := newFolderRepo(t, false, false)
	for _, ref := range []string{f.older.String(), f.older.String()[:10], "main~1"} {
		snap := load(t, f.repo.Dir, "dev", controlplane.Options{Ref: ref})
		requireNoDiags(t, snap)
		checkLoaded(t, snap, "ClusterType/old", "Template/a")
		if snap.Revisions.Environment != f.older.String() || snap.Revisions.Common != f.older.String() {
			t.Errorf("ref %s: revisions = %+v", ref, snap.Revisions)
		}
	}
	if _, err := controlplane.Open(t.Context(), f.repo.Dir, controlplane.Options{Ref: "nope", Layout: controlplane.LayoutFolder}); err != nil {
		t.Fatal(err)
	} else if _, err := open(t, f.repo.Dir, controlplane.Options{Ref: "nope", Layout: controlplane.LayoutFolder}).Load(t.Context(), "dev"); err == nil ||
		!strings.Contains(err.Error(), `ref "nope"`) {
		t.Errorf("Load with a bad ref: err = %v", err)
	}
}

// TestFolderGitHead: without --ref the tip is HEAD, for the environment list and the content
// alike, even when HEAD is not main.
func TestFolderGitHead(t *testing.T) {
	t.Parallel()
	f := newFolderRepo(t, false, false)
	f.repo.Commit(t, "feature", map[string]string{
		"environments/qa/ct.yaml": clusterTypeDoc("qa-ct"),
		"templates/f.yaml":        templateDoc("f"),
	})
	setHead(t, f.repo, "feature")
	cp := open(t, f.repo.Dir, controlplane.Options{})
	envs, _, err := cp.Environments(t.Context())
	if err != nil || len(envs) != 1 || envs[0].Name != "qa" {
		t.Fatalf("environments = %+v, %v", envs, err)
	}
	snap, err := cp.Load(t.Context(), "qa")
	if err != nil {
		t.Fatal(err)
	}
	requireNoDiags(t, snap)
	checkLoaded(t, snap, "ClusterType/qa-ct", "Template/f")
}

// TestFolderGitReadsCommitsOnly: uncommitted files of a work tree are not read.
func TestFolderGitReadsCommitsOnly(t *testing.T) {
	t.Parallel()
	f := newFolderRepo(t, false, false)
	writeFiles(t, f.repo.Dir, map[string]string{"templates/uncommitted.yaml": templateDoc("uncommitted")})
	snap := load(t, f.repo.Dir, "dev", controlplane.Options{})
	checkLoaded(t, snap, "ClusterType/new", "Template/a", "Template/b")
}

// TestFolderCommonRef: --common-ref replaces the pin (or the tip) for common content only.
func TestFolderCommonRef(t *testing.T) {
	t.Parallel()
	f := newFolderRepo(t, false, true)
	snap := load(t, f.repo.Dir, "dev", controlplane.Options{CommonRef: "main"})
	requireNoDiags(t, snap)
	checkLoaded(t, snap, "BaseRepo/main", "ClusterType/new", "Template/a", "Template/b")
	if want := (controlplane.Revisions{Environment: f.newer.String(), Common: f.newer.String(), Pinned: true}); snap.Revisions != want {
		t.Errorf("revisions = %+v, want %+v", snap.Revisions, want)
	}
	_, err := open(t, f.repo.Dir, controlplane.Options{CommonRef: "v9"}).Load(t.Context(), "dev")
	if err == nil || !strings.Contains(err.Error(), `--common-ref "v9"`) || strings.Contains(err.Error(), "base-repo.yaml") {
		t.Errorf("err = %v", err)
	}
}

func TestFolderGitPinnedCommitMissing(t *testing.T) {
	t.Parallel()
	r := gittest.New(t)
	const missing = "fedcba9876543210fedcba9876543210fedcba98"
	r.Commit(t, "main", map[string]string{
		"environments/dev/env.yaml":       envDoc("dev"),
		"environments/dev/base-repo.yaml": baseRepoDoc(missing),
	})
	setHead(t, r, "main")
	_, err := open(t, r.Dir, controlplane.Options{}).Load(t.Context(), "dev")
	if err == nil || !strings.Contains(err.Error(), "environments/dev/base-repo.yaml:9") || !strings.Contains(err.Error(), missing) {
		t.Errorf("err = %v, want the pin's file, line and commit", err)
	}
}

// TestFolderEnvironmentPlacement: an Environment belongs in environments/<its name>/ or in
// the common content (anywhere outside environments/); declared twice, the error names both.
func TestFolderEnvironmentPlacement(t *testing.T) {
	t.Parallel()
	dir := newDir(t, map[string]string{
		"environments/dev/env.yaml":      envDoc("dev"),
		"environments/dev/nested/x.yaml": envDoc("dev"),
		"environments/stage/env.yaml":    envDoc("dev"),
		"environments/qa/a.yaml":         envDoc("qa") + "---\n" + envDoc("qa"),
		"common/envs.yaml":               joinDocs(envDoc("prod"), envDoc("dev")), // dev: lines 8-13
		"common/other.yaml":              clusterTypeDoc("not-an-environment"),
	})
	cp := open(t, dir, controlplane.Options{})
	envs, diags, err := cp.Environments(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	checkDiags(t, diags,
		want{file: "environments/dev/nested/x.yaml", line: 4, has: []string{`duplicate Environment "dev": already defined at environments/dev/env.yaml:1`}},
		want{file: "environments/stage/env.yaml", line: 4, has: []string{`Environment "dev" must be in environments/dev/`}},
		want{file: "environments/qa/a.yaml", line: 11, has: []string{`duplicate Environment "qa"`}},
		want{file: "common/envs.yaml", line: 11, has: []string{`duplicate Environment "dev": already defined at environments/dev/env.yaml:1`}},
	)
	var names []string
	for _, e := range envs {
		names = append(names, e.Name)
	}
	equal(t, "environments", names, []string{"dev", "prod", "qa", "stage"})

	snap, err := cp.Load(t.Context(), "dev")
	if err != nil {
		t.Fatal(err)
	}
	checkDiags(t, snap.Diagnostics,
		want{file: "environments/dev/nested/x.yaml", line: 4, has: []string{`duplicate Environment "dev"`}},
		want{file: "environments/stage/env.yaml", line: 4, has: []string{`Environment "dev" must be in environments/dev/`}},
		want{file: "environments/qa/a.yaml", line: 11, has: []string{`duplicate Environment "qa"`}},
		want{file: "common/envs.yaml", line: 11, has: []string{`duplicate Environment "dev"`}},
	)
	prod, err := cp.Load(t.Context(), "prod")
	if err != nil {
		t.Fatal(err)
	}
	if prod.EnvironmentObject == nil || prod.EnvironmentObject.Source.File != "common/envs.yaml" {
		t.Errorf("prod's Environment = %+v, want the one in common/envs.yaml", prod.EnvironmentObject)
	}
}

// TestFolderEnvironmentNames: an environment is a folder of environments/ holding YAML that
// Flux would deliver, and its name must be usable as a namespace prefix.
func TestFolderEnvironmentNames(t *testing.T) {
	t.Parallel()
	dir := newDir(t, map[string]string{
		".sourceignore":                 "environments/scratch/\n",
		"environments/dev/ct.yaml":      clusterTypeDoc("a"),
		"environments/docs/README.md":   "# not an environment\n",
		"environments/scratch/x.yaml":   clusterTypeDoc("b"),
		"environments/Prod_EU/ct.yaml":  clusterTypeDoc("c"),
		"environments/Prod_EU/env.yaml": envDoc("Prod_EU"),
		"environments/top-level.yaml":   clusterTypeDoc("d"),
		"environments/dev/env.yaml":     envDoc("Dev"),
	})
	cp := open(t, dir, controlplane.Options{})
	envs, diags, err := cp.Environments(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	// A problem of a folder has no line.
	checkDiags(t, diags,
		want{file: "environments/Prod_EU/", line: 0, has: []string{`invalid environment name "Prod_EU"`}},
		want{sev: controlplane.SeverityWarning, file: "environments/top-level.yaml", line: 0, has: []string{"not read", "belongs to no environment"}},
		want{file: "environments/dev/env.yaml", line: 4, has: []string{`Environment "Dev" must be in environments/Dev/`}},
	)
	if len(envs) != 1 || envs[0].Name != "dev" {
		t.Errorf("environments = %+v, want dev only", envs)
	}
	_, err = cp.Load(t.Context(), "Prod_EU")
	if err == nil || !strings.Contains(err.Error(), `invalid environment name "Prod_EU"`) {
		t.Errorf("Load(Prod_EU) err = %v", err)
	}
}

// TestKalypsoEnvironmentNames: an Environment's name must be usable as a namespace.
func TestKalypsoEnvironmentNames(t *testing.T) {
	t.Parallel()
	k := newKalypsoRepo(t, false)
	k.repo.Commit(t, "main", map[string]string{
		".environments/dev.yaml":  envBranchDoc("dev", "dev"),
		".environments/prod.yaml": envBranchDoc("Prod", "prod"),
	})
	envs, diags, err := open(t, k.repo.Dir, controlplane.Options{}).Environments(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	checkDiags(t, diags, want{file: ".environments/prod.yaml", line: 4, has: []string{`invalid environment name "Prod"`}})
	if len(envs) != 1 || envs[0].Name != "dev" {
		t.Errorf("environments = %+v, want dev only", envs)
	}
}

// TestFolderUnpinnedCommonCommit: an environment that follows the tip records as its common
// commit the last commit that changed the common content: a pin (or any change) of another
// environment moves the tip, not the common content.
func TestFolderUnpinnedCommonCommit(t *testing.T) {
	t.Parallel()
	r := gittest.New(t)
	files := map[string]string{
		"environments/dev/env.yaml":  envDoc("dev"),
		"environments/prod/env.yaml": envDoc("prod"),
		"common.yaml":                templateDoc("a"),
	}
	first := r.Commit(t, "main", files)
	files["environments/prod/base-repo.yaml"] = baseRepoDoc(first.String())
	r.Commit(t, "main", files) // prod's pin: environment content only
	setHead(t, r, "main")
	if got := load(t, r.Dir, "dev", controlplane.Options{}).Revisions; got.Common != first.String() || got.Pinned {
		t.Errorf("dev's revisions %+v, want common %s (unpinned)", got, first)
	}
	files["common.yaml"] = templateDoc("b")
	second := r.Commit(t, "main", files)
	if got := load(t, r.Dir, "dev", controlplane.Options{}).Revisions.Common; got != second.String() {
		t.Errorf("dev's common commit %s after a change of the common content, want %s", got, second)
	}
}
