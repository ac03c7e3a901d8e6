package gitops_test

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/fleetform/fleetform/internal/gitops"
	"github.com/fleetform/fleetform/internal/testutil/gittest"
)

// location returns how a test reaches repo: its file:// URL, or its URL on an in-process
// HTTP git server.
func location(t *testing.T, repo *gittest.Repo, transport string) string {
	t.Helper()
	if transport == "http" {
		return gittest.ServeRepo(t, repo)
	}
	return repo.URL()
}

// intruder commits to the branch as someone else would, from inside the writer's
// rendering (after it read the branch, before it publishes): every time, or once.
type intruder struct {
	t      *testing.T
	repo   *gittest.Repo
	branch string
	always bool

	mu      sync.Mutex
	commits []plumbing.Hash
}

// progress is the writer's Progress hook.
func (in *intruder) progress(_, _ int) {
	in.mu.Lock()
	defer in.mu.Unlock()
	if !in.always && len(in.commits) > 0 {
		return
	}
	files := in.repo.Files(in.t, in.branch)
	n := len(in.commits)
	files[fmt.Sprintf("someone-else-%d.md", n)] = "written in between\n"
	delete(files, "east/shop-web/namespace.yaml") // and a file fleetform owns
	in.commits = append(in.commits, in.repo.Commit(in.t, in.branch, files))
}

// TestRetryAfterSomeoneElseWrote: the branch moves between planning and publishing; the
// writer re-reads, re-plans on top of the other commit and publishes: nothing of either
// is lost, and fleetform's folders are right again.
func TestRetryAfterSomeoneElseWrote(t *testing.T) {
	for _, transport := range []string{"file", "http"} {
		t.Run(transport, func(t *testing.T) {
			f := newFleet(t)
			repo := gittest.NewBare(t).Checked(t)
			target := gitops.Target{Repo: location(t, repo, transport), Branch: "dev"}
			apply(t, newWriter(t, gitops.Options{}), f.input(target), gitops.CommitOptions{})
			f.setNodeCount("north", "11")
			in := f.input(target)

			other := &intruder{t: t, repo: repo, branch: "dev"}
			w := newWriter(t, gitops.Options{Workers: 1, Progress: other.progress})
			res := apply(t, w, in, gitops.CommitOptions{})
			if len(other.commits) != 1 {
				t.Fatalf("%d intruding commits, want 1", len(other.commits))
			}
			if res.Attempts != 2 || res.Plan.Base != other.commits[0] {
				t.Errorf("attempts %d, base %s; want 2 attempts on top of %s", res.Attempts, res.Plan.Base, other.commits[0])
			}
			if got := strings.TrimSpace(gitCLI(t, repo.Dir, "rev-parse", "dev^")); got != other.commits[0].String() {
				t.Errorf("parent %s, want the other commit %s", got, other.commits[0])
			}
			got := repo.Files(t, "dev")
			if got["someone-else-0.md"] != "written in between\n" {
				t.Error("the other commit's file is lost")
			}
			if got["east/shop-web/namespace.yaml"] == "" {
				t.Error("the file the other commit removed from an owned folder is not restored")
			}
			if !strings.Contains(got["north/shop-web/platform-config.yaml"], `NODE_COUNT: "11"`) {
				t.Errorf("the change is lost:\n%s", got["north/shop-web/platform-config.yaml"])
			}
			checkFleetTree(t, withoutFiles(got, "someone-else-0.md"), fleetTypes, fleetTargets)
		})
	}
}

// withoutFiles returns files without the paths given.
func withoutFiles(files map[string]string, paths ...string) map[string]string {
	out := map[string]string{}
	for p, c := range files {
		out[p] = c
	}
	for _, p := range paths {
		delete(out, p)
	}
	return out
}

// TestRetriesAreBounded: when others keep writing, the writer gives up after MaxAttempts
// with ErrConflict, and never forces: the branch is the others' last commit.
func TestRetriesAreBounded(t *testing.T) {
	for _, transport := range []string{"file", "http"} {
		t.Run(transport, func(t *testing.T) {
			f := newFleet(t)
			repo := gittest.NewBare(t).Checked(t)
			target := gitops.Target{Repo: location(t, repo, transport), Branch: "dev"}
			apply(t, newWriter(t, gitops.Options{}), f.input(target), gitops.CommitOptions{})
			f.setNodeCount("north", "11")
			in := f.input(target)

			other := &intruder{t: t, repo: repo, branch: "dev", always: true}
			w := newWriter(t, gitops.Options{Workers: 1, Progress: other.progress})
			res, err := w.Apply(t.Context(), in, gitops.CommitOptions{MaxAttempts: 3})
			if !errors.Is(err, gitops.ErrConflict) {
				t.Fatalf("apply: %v; want a conflict", err)
			}
			if len(other.commits) != 3 || res.Attempts != 3 || !res.Commit.IsZero() {
				t.Errorf("%d intruding commits, %d attempts, commit %s; want 3, 3, none", len(other.commits), res.Attempts, res.Commit)
			}
			if got := repo.Tip(t, "dev"); got != other.commits[2] {
				t.Errorf("dev is %s, want the others' last commit %s", got, other.commits[2])
			}
		})
	}
}

// TestConcurrentWriters: several writers race on one branch, each with its own folder:
// every one of them lands, on a linear history, and no folder is lost. (Each writer loses
// at most once per other writer's commit, plus rounds where two lose on the lock file at
// once; 10 attempts leave room for those.)
func TestConcurrentWriters(t *testing.T) {
	const writers = 3
	for _, transport := range []string{"file", "http"} {
		t.Run(transport, func(t *testing.T) {
			repo := gittest.NewBare(t).Checked(t)
			loc := location(t, repo, transport)
			var inputs []gitops.Input
			for i := range writers {
				f := newFleet(t)
				f.setNodeCount("east", fmt.Sprint(100+i))
				inputs = append(inputs, f.input(gitops.Target{Repo: loc, Branch: "dev", Path: fmt.Sprintf("fleet-%d", i)}))
			}
			results := make([]*gitops.Result, writers)
			var wg sync.WaitGroup
			for i, in := range inputs {
				w := newWriter(t, gitops.Options{})
				wg.Go(func() {
					res, err := w.Apply(t.Context(), in, gitops.CommitOptions{MaxAttempts: 10})
					if err != nil {
						t.Errorf("writer %d: %v", i, err)
						return
					}
					results[i] = res
				})
			}
			wg.Wait()
			if t.Failed() {
				return
			}
			if n := commitCount(t, repo.Dir); n != writers {
				t.Errorf("%d commits, want %d", n, writers)
			}
			if merges := strings.TrimSpace(gitCLI(t, repo.Dir, "rev-list", "--merges", "dev")); merges != "" {
				t.Errorf("merge commits: %s", merges)
			}
			got := repo.Files(t, "dev")
			attempts := 0
			for i, res := range results {
				attempts += res.Attempts
				dir := fmt.Sprintf("fleet-%d/", i)
				for _, p := range wantTree(dir, fleetTypes, fleetTargets) {
					if _, ok := got[p]; !ok {
						t.Errorf("writer %d: %s lost", i, p)
					}
				}
				if !strings.Contains(got[dir+"east/shop-api/platform-config.yaml"], fmt.Sprintf(`NODE_COUNT: "%d"`, 100+i)) {
					t.Errorf("writer %d: wrong content in %seast/shop-api/platform-config.yaml", i, dir)
				}
			}
			t.Logf("%d writers took %d attempts in all", writers, attempts)
		})
	}
}

// TestEditFileKeepsAChangeMadeInBetween: someone changes the file after EditFile read it and
// before it published; EditFile reads it again and edits the new version, so both changes
// are kept; an error of the edit writes nothing.
func TestEditFileKeepsAChangeMadeInBetween(t *testing.T) {
	for _, transport := range []string{"file", "http"} {
		t.Run(transport, func(t *testing.T) {
			repo := gittest.NewBare(t).Checked(t)
			repo.Commit(t, "dev", map[string]string{"base-repo.yaml": "path: .\ncommit: old\n"})
			w := newWriter(t, gitops.Options{})
			loc := location(t, repo, transport)
			var seen []string
			edit := func(old []byte) ([]byte, error) {
				seen = append(seen, string(old))
				if len(seen) == 1 { // alice commits her change in between
					repo.Commit(t, "dev", map[string]string{"base-repo.yaml": "path: ./platform\ncommit: old\n"})
				}
				return []byte(strings.Replace(string(old), "commit: old", "commit: new", 1)), nil
			}
			commit, err := w.EditFile(t.Context(), loc, "dev", "base-repo.yaml", edit, "pin", gitops.CommitOptions{})
			if err != nil || commit.IsZero() {
				t.Fatalf("EditFile = %s, %v", commit, err)
			}
			if got, want := repo.Files(t, "dev")["base-repo.yaml"], "path: ./platform\ncommit: new\n"; got != want {
				t.Errorf("base-repo.yaml = %q, want %q (alice's change and the pin); the edit saw %q", got, want, seen)
			}

			tip := repo.Tip(t, "dev")
			refused := errors.New("refused")
			if _, err := w.EditFile(t.Context(), loc, "dev", "base-repo.yaml", func([]byte) ([]byte, error) { return nil, refused }, "x",
				gitops.CommitOptions{}); !errors.Is(err, refused) {
				t.Errorf("an edit's error: got %v", err)
			}
			if repo.Tip(t, "dev") != tip {
				t.Error("a refused edit moved the branch")
			}
		})
	}
}
