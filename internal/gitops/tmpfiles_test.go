package gitops_test

import (
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/fleetform/fleetform/internal/gitops"
	"github.com/fleetform/fleetform/internal/testutil/gittest"
)

// leaveTmpFiles writes files into the repository's temporary folder as a killed writer
// leaves them, last modified at the given times.
func leaveTmpFiles(t *testing.T, repo *gittest.Repo, files map[string]time.Time) string {
	t.Helper()
	dir := filepath.Join(repo.Dir, "objects", gitops.TemporaryDir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, modified := range files {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte("PACK\x00\x00\x00\x02 half a pack"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, modified, modified); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// tmpNames lists the pack writer's temporary files in dir (not its lock file).
func tmpNames(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		if e.Name() != "writers.lock" {
			names = append(names, e.Name())
		}
	}
	slices.Sort(names)
	return names
}

// TestApplyRemovesStaleTemporaryPacks: the temporary pack and index a killed apply left
// behind are removed by the next apply once they are over an hour old, whether it commits
// or not; a recent one may be a concurrent apply's, and is kept.
func TestApplyRemovesStaleTemporaryPacks(t *testing.T) {
	f := newFleet(t)
	repo := gittest.NewBare(t).Checked(t)
	w := newWriter(t, gitops.Options{})
	in := f.input(gitops.Target{Repo: repo.Dir, Branch: "dev"})
	apply(t, w, in, gitops.CommitOptions{})

	old, recent := time.Now().Add(-2*time.Hour), time.Now().Add(-time.Minute)
	dir := leaveTmpFiles(t, repo, map[string]time.Time{
		"tmp_pack_1234": old, "tmp_idx_1234": old, "tmp_pack_5678": recent, "notes.txt": old,
	})
	f.setNodeCount("east", "5")
	if res := apply(t, w, f.input(in.Target), gitops.CommitOptions{}); res.Commit.IsZero() {
		t.Fatal("no commit")
	}
	if got, want := tmpNames(t, dir), []string{"notes.txt", "tmp_pack_5678"}; !slices.Equal(got, want) {
		t.Errorf("after an apply that committed: %v, want %v", got, want)
	}

	leaveTmpFiles(t, repo, map[string]time.Time{"tmp_pack_9999": old})
	if res := apply(t, w, f.input(in.Target), gitops.CommitOptions{}); !res.Commit.IsZero() {
		t.Fatalf("committed %s with nothing to change", res.Commit)
	}
	if got, want := tmpNames(t, dir), []string{"notes.txt", "tmp_pack_5678"}; !slices.Equal(got, want) {
		t.Errorf("after an apply with no change: %v, want %v", got, want)
	}
}

// TestStaleTemporaryPacksKeptWhileAWriterWorks: while another writer holds the writers'
// lock (an apply at work, or one stopped for hours), no temporary file is removed, however
// old; once it is released, the next apply removes the old ones.
func TestStaleTemporaryPacksKeptWhileAWriterWorks(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("writers take no lock on this system: temporary files are judged by age alone")
	}
	f := newFleet(t)
	repo := gittest.NewBare(t).Checked(t)
	w := newWriter(t, gitops.Options{})
	in := f.input(gitops.Target{Repo: repo.Dir, Branch: "dev"})
	apply(t, w, in, gitops.CommitOptions{})

	old := time.Now().Add(-3 * time.Hour)
	dir := leaveTmpFiles(t, repo, map[string]time.Time{"tmp_pack_1234": old, "tmp_idx_1234": old})
	unlock, err := gitops.LockTemporaryFiles(dir)
	if err != nil {
		t.Fatal(err)
	}
	f.setNodeCount("east", "5")
	if res := apply(t, w, f.input(in.Target), gitops.CommitOptions{}); res.Commit.IsZero() {
		t.Fatal("no commit while another writer holds the lock")
	}
	if got, want := tmpNames(t, dir), []string{"tmp_idx_1234", "tmp_pack_1234"}; !slices.Equal(got, want) {
		t.Errorf("while another writer works: %v, want %v", got, want)
	}
	unlock()
	apply(t, w, f.input(in.Target), gitops.CommitOptions{})
	if got := tmpNames(t, dir); len(got) != 0 {
		t.Errorf("after the other writer finished: %v, want none", got)
	}
}
