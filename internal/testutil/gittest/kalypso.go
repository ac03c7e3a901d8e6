package gittest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
)

// Kalypso is Kalypso's sample repositories, rebuilt as git repositories in the Kalypso layout.
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

// ModuleRoot returns the folder of the project's go.mod, above the test's directory.
func ModuleRoot(tb testing.TB) string {
	tb.Helper()
	dir, err := os.Getwd()
	if err != nil {
		tb.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			tb.Fatal("go.mod not found above the test's directory")
		}
		dir = parent
	}
}

// SharedDir returns ../shared/<sub> next to the project root, skipping the test (and saying
// why) when it is absent: it is not part of the repository, and CI always has it.
func SharedDir(tb testing.TB, sub ...string) string {
	tb.Helper()
	dir := filepath.Join(append([]string{ModuleRoot(tb), "..", "shared"}, sub...)...)
	if _, err := os.Stat(dir); err != nil {
		tb.Skipf("%s not found (it lives in ../shared next to the project; CI always has it)", dir)
	}
	return dir
}

// FixtureDir returns ../shared/fixtures/kalypso, skipping the test when it is absent.
func FixtureDir(tb testing.TB) string {
	tb.Helper()
	return SharedDir(tb, "fixtures", "kalypso")
}

// NewKalypso builds the sample control plane as the fixture README describes: main from
// control-plane/main, dev and stage from their folders, with base-repo.yaml re-pinned to
// the main commit built here (the sample pins commits that predate its own templates).
func NewKalypso(tb testing.TB) *Kalypso {
	tb.Helper()
	fx := FixtureDir(tb)
	k, err := BuildKalypso(fx, tb.TempDir())
	if err != nil {
		tb.Fatal(err)
	}
	return k
}

// BuildKalypso builds the sample repositories from fixture directory fx under dir
// (dir/control-plane and dir/svc-src), for callers without a testing.TB.
func BuildKalypso(fx, dir string) (*Kalypso, error) {
	cp, err := InitRepo(filepath.Join(dir, "control-plane"), false)
	if err != nil {
		return nil, err
	}
	files, err := readDir(filepath.Join(fx, "control-plane", "main"))
	if err != nil {
		return nil, err
	}
	main, err := CommitFiles(cp.Git.Storer, "main", files, "main")
	if err != nil {
		return nil, err
	}
	for _, env := range []string{"dev", "stage"} {
		files, err := readDir(filepath.Join(fx, "control-plane", env))
		if err != nil {
			return nil, err
		}
		files["base-repo.yaml"] = repin(files["base-repo.yaml"], main.String())
		if _, err := CommitFiles(cp.Git.Storer, env, files, env); err != nil {
			return nil, err
		}
	}
	svc, err := InitRepo(filepath.Join(dir, "svc-src"), false)
	if err != nil {
		return nil, err
	}
	if files, err = readDir(filepath.Join(fx, "svc-src", "main")); err != nil {
		return nil, err
	}
	if _, err := CommitFiles(svc.Git.Storer, "main", files, "svc"); err != nil {
		return nil, err
	}
	return &Kalypso{ControlPlane: cp, SvcSrc: svc, Main: main, RepoMap: map[string]string{SvcSrcURL: svc.Dir}}, nil
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
