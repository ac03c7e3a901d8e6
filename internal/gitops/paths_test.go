package gitops_test

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fleetform/fleetform/internal/controlplane"
	"github.com/fleetform/fleetform/internal/gitops"
	"github.com/fleetform/fleetform/internal/testutil/gittest"
)

// TestApplyRefusesPathsGitRefuses: a GitOps path that names .git, leaves the repository or
// is absolute is refused by plan and apply, whether it comes from the GitOpsRepo (which
// validate reports) or from an override such as --path; nothing is written.
func TestApplyRefusesPathsGitRefuses(t *testing.T) {
	f := newFleet(t)
	repo := gittest.NewBare(t).Checked(t)
	w := newWriter(t, gitops.Options{})
	for _, path := range []string{".git", ".GIT", "x/.git./y", "git~1", "../escape", "a/../../b", "/abs", "a//b"} {
		t.Run("--path "+path, func(t *testing.T) {
			in := f.input(gitops.Target{Repo: repo.Dir, Branch: "dev", Path: path})
			checkRefused(t, w, in, repo, `GitOps path "`+path+`"`)
		})
	}
	t.Run("GitOpsRepo", func(t *testing.T) {
		f.files["environments/dev/gitops-repo.yaml"] = `apiVersion: scheduler.kalypso.io/v1alpha1
kind: GitOpsRepo
metadata: {name: dev}
spec: {repo: "https://github.com/org/gitops", branch: dev, path: .git}
`
		defer delete(f.files, "environments/dev/gitops-repo.yaml")
		in := f.input(gitops.Target{})
		if !controlplane.HasErrors(in.Snapshot.Diagnostics) {
			t.Errorf("the GitOpsRepo's path is not reported: %v", in.Snapshot.Diagnostics)
		}
		in.Target = gitops.TargetFor(in.Snapshot, gitops.Target{}, func(string) string { return repo.Dir })
		checkRefused(t, w, in, repo, `environments/dev/gitops-repo.yaml:4: GitOpsRepo/dev: spec.path: path ".git"`)
	})
}

// checkRefused requires plan and apply to fail with an error that says msg, and the
// repository to be as it was: no branch, no pack.
func checkRefused(t *testing.T, w *gitops.Writer, in gitops.Input, repo *gittest.Repo, msg string) {
	t.Helper()
	if _, err := w.Plan(t.Context(), in); err == nil || !strings.Contains(err.Error(), msg) {
		t.Errorf("plan: %v, want the path refused", err)
	}
	res, err := w.Apply(t.Context(), in, gitops.CommitOptions{})
	if err == nil || !strings.Contains(err.Error(), msg) {
		t.Errorf("apply: %v, want the path refused", err)
	}
	if res != nil && !res.Commit.IsZero() {
		t.Errorf("apply committed %s", res.Commit)
	}
	if tip := repo.Tip(t, "dev"); !tip.IsZero() {
		t.Errorf("dev was created at %s", tip)
	}
	if packs, _ := filepath.Glob(filepath.Join(repo.Dir, "objects", "pack", "*.pack")); len(packs) > 0 {
		t.Errorf("objects were written: %v", packs)
	}
}

// TestWriterRefusesEntriesGitRefuses: whatever path it is given, the writer never adds a
// tree entry git refuses (a .git folder in any form, "..", an empty name), so a commit it
// makes always passes git fsck and can be checked out.
func TestWriterRefusesEntriesGitRefuses(t *testing.T) {
	repo := gittest.NewBare(t).Checked(t)
	w := newWriter(t, gitops.Options{})
	base, err := w.WriteFiles(t.Context(), repo.Dir, "dev", map[string][]byte{"README.md": []byte("hello\n")}, "init", gitops.CommitOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for p, gitDir := range map[string]bool{".git/config": true, "x/.GIT/hooks/post-checkout": true, "x/.git./y": true,
		"git~1/HEAD": true, ".g\u200cit/x": true, "x/.git": true, "../escape": false, "x/../y": false, "a//b": false} {
		commit, err := w.WriteFiles(t.Context(), repo.Dir, "dev", map[string][]byte{p: []byte("x\n")}, "bad", gitops.CommitOptions{})
		if err == nil || !strings.Contains(err.Error(), "refusing to write") || errors.Is(err, controlplane.ErrGitDir) != gitDir {
			t.Errorf("%s: commit %s, err %v; want it refused", p, commit, err)
		}
	}
	if tip := repo.Tip(t, "dev"); tip != base {
		t.Errorf("dev moved to %s", tip)
	}
	if tmp := tmpNames(t, filepath.Join(repo.Dir, "objects", gitops.TemporaryDir)); len(tmp) > 0 {
		t.Errorf("temporary files left: %v", tmp)
	}
}
