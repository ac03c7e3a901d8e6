package gittest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
)

// Kalypso's sample repositories, rebuilt as git repositories in the Kalypso layout.
type Kalypso struct {
	// ControlPlane has branches main, dev and stage.
	ControlPlane *Repo
	// SvcSrc has branch main (the platform-svc workload registration's repository).
	SvcSrc *Repo
	// Main is the commit of branch main, pinned by dev's and stage's base-repo.yaml.
	Main plumbing.Hash
	// RepoMap maps the sample's repository URLs to the local repositories.
	RepoMap map[string]string
}

// SvcSrcURL is the repository the sample's WorkloadRegistration names.
const SvcSrcURL = "https://github.com/microsoft/kalypso-svc-src"

// FixtureDir returns ../shared/fixtures/kalypso next to the project root, skipping the test
// (and saying why) when it is absent.
func FixtureDir(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("go.mod not found above the test directory")
		}
		dir = parent
	}
	fx := filepath.Join(dir, "..", "shared", "fixtures", "kalypso")
	if _, err := os.Stat(fx); err != nil {
		t.Skipf("Kalypso fixture not found at %s (it lives in ../shared next to the project; CI always has it)", fx)
	}
	return fx
}

// NewKalypso builds the sample control plane as the fixture README describes: main from
// control-plane/main, dev and stage from their folders, with base-repo.yaml re-pinned to
// the main commit built here (the sample pins commits that predate its own templates).
func NewKalypso(t testing.TB) *Kalypso {
	t.Helper()
	fx := FixtureDir(t)
	cp := New(t)
	main := cp.CommitDir(t, "main", filepath.Join(fx, "control-plane", "main"))
	for _, env := range []string{"dev", "stage"} {
		files := ReadDir(t, filepath.Join(fx, "control-plane", env))
		files["base-repo.yaml"] = repin(files["base-repo.yaml"], main.String())
		cp.Commit(t, env, files)
	}
	setHead(t, cp, "main")
	svc := New(t)
	svc.CommitDir(t, "main", filepath.Join(fx, "svc-src", "main"))
	setHead(t, svc, "main")
	return &Kalypso{ControlPlane: cp, SvcSrc: svc, Main: main, RepoMap: map[string]string{SvcSrcURL: svc.Dir}}
}

func repin(baseRepo, commit string) string {
	lines := strings.Split(baseRepo, "\n")
	for i, l := range lines {
		if strings.HasPrefix(strings.TrimSpace(l), "commit:") {
			lines[i] = l[:strings.Index(l, "commit:")] + "commit: " + commit
		}
	}
	return strings.Join(lines, "\n")
}

func setHead(t testing.TB, r *Repo, branch string) {
	t.Helper()
	ref := plumbing.NewSymbolicReference(plumbing.HEAD, plumbing.NewBranchReferenceName(branch))
	if err := r.Git.Storer.SetReference(ref); err != nil {
		t.Fatal(err)
	}
}
