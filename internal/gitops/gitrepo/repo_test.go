package gitrepo_test

import (
	"errors"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/fleetform/fleetform/internal/gitops/gitrepo"
	"github.com/fleetform/fleetform/internal/testutil/gittest"
)

// open opens repo through the plumbing, in place or over HTTP (through the cache).
func open(t *testing.T, repo *gittest.Repo, transport string) *gitrepo.Repo {
	t.Helper()
	loc := repo.Dir
	if transport == "http" {
		loc = gittest.ServeRepo(t, repo)
	}
	r, err := gitrepo.Open(t.Context(), loc, t.TempDir(), nil, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

var sig = object.Signature{Name: "tester", Email: "tester@localhost", When: time.Unix(1700000000, 0).UTC()}

// TestTreeEditsBecomeOneCommit: a tree read at the branch's tip, edited, is written as one
// commit on top of it; the branch moves only when it is published, and a publish from a
// tip that is no longer the branch's is a conflict.
func TestTreeEditsBecomeOneCommit(t *testing.T) {
	for _, transport := range []string{"path", "http"} {
		t.Run(transport, func(t *testing.T) {
			repo := gittest.NewBare(t).Checked(t)
			tip := repo.Commit(t, "dev", map[string]string{
				"README.md": "notes", "ct/a/x.yaml": "x", "ct/a/y.yaml": "y", "ct/b/z.yaml": "z",
			})
			r := open(t, repo, transport)
			if got, err := r.Tip(t.Context(), "dev"); err != nil || got != tip {
				t.Fatalf("Tip = %s, %v; want %s", got, err, tip)
			}
			tr, err := r.Edit(tip)
			if err != nil {
				t.Fatal(err)
			}
			editTree(t, tr)
			commit, err := tr.Commit(tip, "edit\n", sig)
			if err != nil {
				t.Fatal(err)
			}
			if got := repo.Tip(t, "dev"); got != tip {
				t.Fatalf("the branch moved to %s before Publish", got)
			}
			if err := r.Publish(t.Context(), "dev", commit, tip); err != nil {
				t.Fatal(err)
			}
			want := map[string]string{"README.md": "notes", "ct/a/x.yaml": "x", "ct/a/y.yaml": "y2", "ct/c/new.yaml": "n"}
			if got := repo.Files(t, "dev"); !maps.Equal(got, want) {
				t.Errorf("dev holds %v, want %v", got, want)
			}
			checkCommit(t, repo.Dir, commit, tip)

			late, err := r.Edit(tip)
			if err != nil {
				t.Fatal(err)
			}
			if _, _, err := late.SetFile("late.txt", []byte("late")); err != nil {
				t.Fatal(err)
			}
			lateCommit, err := late.Commit(tip, "late\n", sig)
			if err != nil {
				t.Fatal(err)
			}
			if err := r.Publish(t.Context(), "dev", lateCommit, tip); !errors.Is(err, gitrepo.ErrConflict) {
				t.Errorf("publishing from a stale tip: %v, want ErrConflict", err)
			}
			if got := repo.Tip(t, "dev"); got != commit {
				t.Errorf("dev is %s after a conflict, want %s", got, commit)
			}
		})
	}
}

// editTree reads and edits the tree of TestTreeEditsBecomeOneCommit's first commit.
func editTree(t *testing.T, tr *gitrepo.Tree) {
	t.Helper()
	if files, dirs, err := tr.List("ct"); err != nil || files != nil || !slices.Equal(dirs, []string{"a", "b"}) {
		t.Errorf("List(ct) = %v %v %v", files, dirs, err)
	}
	if h, ok, err := tr.File("ct/a/x.yaml"); err != nil || !ok || h != gitrepo.BlobHash([]byte("x")) {
		t.Errorf("File(ct/a/x.yaml) = %s %v %v", h, ok, err)
	}
	if data, err := tr.Blob(gitrepo.BlobHash([]byte("y"))); err != nil || string(data) != "y" {
		t.Errorf("Blob(y) = %q %v", data, err)
	}
	for _, c := range []struct {
		path, content string
		action        gitrepo.Action
		old           plumbing.Hash
	}{
		{"ct/a/x.yaml", "x", gitrepo.Unchanged, gitrepo.BlobHash([]byte("x"))},
		{"ct/a/y.yaml", "y2", gitrepo.Modified, gitrepo.BlobHash([]byte("y"))},
		{"ct/c/new.yaml", "n", gitrepo.Added, plumbing.ZeroHash},
	} {
		action, old, err := tr.SetFile(c.path, []byte(c.content))
		if err != nil || action != c.action || old != c.old {
			t.Errorf("SetFile(%s) = %q %s %v, want %q %s", c.path, action, old, err, c.action, c.old)
		}
	}
	removed, err := tr.Remove("ct/b")
	if want := map[string]plumbing.Hash{"ct/b/z.yaml": gitrepo.BlobHash([]byte("z"))}; err != nil || !maps.Equal(removed, want) {
		t.Errorf("Remove(ct/b) = %v %v, want %v", removed, err, want)
	}
	if h, err := tr.DirHash("ct/b"); err != nil || !h.IsZero() {
		t.Errorf("DirHash of a removed folder = %s %v", h, err)
	}
}

// checkCommit fails unless commit has parent as its only parent and sig as its author and
// committer.
func checkCommit(t *testing.T, dir string, commit, parent plumbing.Hash) {
	t.Helper()
	g, err := git.PlainOpen(dir)
	if err != nil {
		t.Fatal(err)
	}
	c, err := g.CommitObject(commit)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(c.ParentHashes, []plumbing.Hash{parent}) || c.Author.Name != sig.Name || c.Committer.Email != sig.Email ||
		!c.Author.When.Equal(sig.When) || c.Message != "edit\n" {
		t.Errorf("commit %s: parents %v, author %v, committer %v, message %q", commit, c.ParentHashes, c.Author, c.Committer, c.Message)
	}
}

// TestSetFileRefusesNamesGitRefuses: a path with a name git refuses in a tree is refused,
// and the tree is left as it was.
func TestSetFileRefusesNamesGitRefuses(t *testing.T) {
	repo := gittest.NewBare(t).Checked(t)
	tip := repo.Commit(t, "dev", map[string]string{"a/x": "x"})
	tr, err := open(t, repo, "path").Edit(tip)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{".git/config", "a/.GIT/x", "a/../b", "a//b", "a/.", "git~1/x"} {
		if _, _, err := tr.SetFile(p, []byte("bad")); err == nil || !strings.Contains(err.Error(), "refusing to write") {
			t.Errorf("SetFile(%q) = %v, want a refusal", p, err)
		}
	}
	if files, dirs, err := tr.List(""); err != nil || files != nil || !slices.Equal(dirs, []string{"a"}) {
		t.Errorf("root after refusals: %v %v %v", files, dirs, err)
	}
}

// TestWriteFiles: files written onto a new branch make a root commit; removing one and
// writing the same content again changes only what differs; nothing to change, no commit.
func TestWriteFiles(t *testing.T) {
	repo := gittest.NewBare(t).Checked(t)
	r := open(t, repo, "path")
	ctx := t.Context()
	first, base, err := r.WriteFiles(ctx, "main", map[string][]byte{"a/x": []byte("x"), "b": []byte("b")}, "first\n", sig)
	if err != nil || first.IsZero() || !base.IsZero() {
		t.Fatalf("WriteFiles on a new branch = %s on %s, %v", first, base, err)
	}
	if err := r.Publish(ctx, "main", first, base); err != nil {
		t.Fatal(err)
	}
	second, base, err := r.WriteFiles(ctx, "main", map[string][]byte{"a/x": []byte("x"), "b": nil, "c": []byte("c")}, "second\n", sig)
	if err != nil || second.IsZero() || base != first {
		t.Fatalf("WriteFiles = %s on %s, %v; want a commit on %s", second, base, err, first)
	}
	if err := r.Publish(ctx, "main", second, base); err != nil {
		t.Fatal(err)
	}
	if got, want := repo.Files(t, "main"), map[string]string{"a/x": "x", "c": "c"}; !maps.Equal(got, want) {
		t.Errorf("main holds %v, want %v", got, want)
	}
	same, base, err := r.WriteFiles(ctx, "main", map[string][]byte{"a/x": []byte("x"), "b": nil}, "same\n", sig)
	if err != nil || !same.IsZero() || base != second {
		t.Errorf("WriteFiles with nothing to change = %s on %s, %v", same, base, err)
	}
}

// TestSetFiles: the files of one folder written at once change what SetFile of each would
// (unchanged, modified, added, in a folder made on the way), a name git refuses is refused
// with its path, and the commit holds exactly the files written.
func TestSetFiles(t *testing.T) {
	repo := gittest.NewBare(t).Checked(t)
	tip := repo.Commit(t, "dev", map[string]string{"ct/a/x": "x", "ct/a/y": "y"})
	r := open(t, repo, "path")
	tr, err := r.Edit(tip)
	if err != nil {
		t.Fatal(err)
	}
	files := []gitrepo.File{{Name: "x", Content: []byte("x")}, {Name: "y", Content: []byte("y2")}, {Name: "n", Content: []byte("n")}}
	changes := make([]gitrepo.FileChange, len(files))
	if err := tr.SetFiles("ct/a", files, changes); err != nil {
		t.Fatal(err)
	}
	want := []gitrepo.FileChange{
		{Action: gitrepo.Unchanged, Old: gitrepo.BlobHash([]byte("x"))},
		{Action: gitrepo.Modified, Old: gitrepo.BlobHash([]byte("y"))},
		{Action: gitrepo.Added},
	}
	if !slices.Equal(changes, want) {
		t.Errorf("SetFiles(ct/a) = %v, want %v", changes, want)
	}
	if err := tr.SetFiles("ct/b", files[2:], changes[:1]); err != nil || changes[0] != (gitrepo.FileChange{Action: gitrepo.Added}) {
		t.Errorf("SetFiles(ct/b), a new folder = %v %v", changes[0], err)
	}
	err = tr.SetFiles("ct/a", []gitrepo.File{{Name: ".GIT", Content: []byte("bad")}}, changes[:1])
	if err == nil || !strings.Contains(err.Error(), `refusing to write "ct/a/.GIT"`) {
		t.Errorf("SetFiles(ct/a, .GIT) = %v, want a refusal naming ct/a/.GIT", err)
	}
	commit, err := tr.Commit(tip, "edit\n", sig)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Publish(t.Context(), "dev", commit, tip); err != nil {
		t.Fatal(err)
	}
	if got, want := repo.Files(t, "dev"), map[string]string{"ct/a/x": "x", "ct/a/y": "y2", "ct/a/n": "n", "ct/b/n": "n"}; !maps.Equal(got, want) {
		t.Errorf("dev holds %v, want %v", got, want)
	}
}

// TestReadAhead: folders read ahead on other goroutines while the tree is edited are taken
// by the edits that need them, and two folders with the same tree are edited apart.
func TestReadAhead(t *testing.T) {
	repo := gittest.NewBare(t).Checked(t)
	same := map[string]string{"a": "a", "b": "b"}
	files := map[string]string{}
	for _, ct := range []string{"ct1", "ct2"} {
		for n, c := range same {
			files[ct+"/"+n] = c
		}
	}
	tip := repo.Commit(t, "dev", files)
	r := open(t, repo, "path")
	tr, err := r.Edit(tip)
	if err != nil {
		t.Fatal(err)
	}
	h1, err1 := tr.DirHash("ct1")
	h2, err2 := tr.DirHash("ct2")
	if err1 != nil || err2 != nil || h1 != h2 || h1.IsZero() {
		t.Fatalf("DirHash: %v %v, %v %v; want one tree for both folders", h1, err1, h2, err2)
	}
	done := make(chan struct{}, 2)
	for range 2 {
		go func() {
			tr.ReadAhead(h1)
			done <- struct{}{}
		}()
	}
	if _, _, err := tr.SetFile("other/x", []byte("x")); err != nil { // edited meanwhile
		t.Fatal(err)
	}
	<-done
	<-done
	for p, c := range map[string]string{"ct1/a": "a2", "ct2/b": "b2"} {
		if action, _, err := tr.SetFile(p, []byte(c)); err != nil || action != gitrepo.Modified {
			t.Fatalf("SetFile(%s) = %v, %v; want modified", p, action, err)
		}
	}
	commit, err := tr.Commit(tip, "edit\n", sig)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Publish(t.Context(), "dev", commit, tip); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"ct1/a": "a2", "ct1/b": "b", "ct2/a": "a", "ct2/b": "b2", "other/x": "x"}
	if got := repo.Files(t, "dev"); !maps.Equal(got, want) {
		t.Errorf("dev holds %v, want %v", got, want)
	}
}

// TestForget: in a tree that only plans, a folder forgotten after an edit reads again as
// the repository has it, and a folder new in the plan is gone; in a tree that will be
// committed, Forget changes nothing.
func TestForget(t *testing.T) {
	repo := gittest.NewBare(t).Checked(t)
	tip := repo.Commit(t, "dev", map[string]string{"ct/a/x": "x", "other/y": "y"})
	r := open(t, repo, "path")
	edit := func(planOnly bool) *gitrepo.Tree {
		tr, err := r.Edit(tip)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(tr.Discard)
		if planOnly {
			tr.PlanOnly()
		}
		for p, content := range map[string]string{"ct/a/x": "x2", "ct/b/n": "n", "new/z": "z"} {
			if _, _, err := tr.SetFile(p, []byte(content)); err != nil {
				t.Fatal(err)
			}
		}
		tr.Forget("ct")
		tr.Forget("new")
		return tr
	}
	read := func(tr *gitrepo.Tree, p string) string { // the content of p, among those this test writes
		h, ok, err := tr.File(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, content := range []string{"x", "x2", "n", "z", "y"} {
			if ok && h == gitrepo.BlobHash([]byte(content)) {
				return content
			}
		}
		return "(none)"
	}
	for _, c := range []struct {
		planOnly bool
		want     map[string]string
	}{
		{true, map[string]string{"ct/a/x": "x", "ct/b/n": "(none)", "new/z": "(none)", "other/y": "y"}},
		{false, map[string]string{"ct/a/x": "x2", "ct/b/n": "n", "new/z": "z", "other/y": "y"}},
	} {
		tr := edit(c.planOnly)
		for p, want := range c.want {
			if got := read(tr, p); got != want {
				t.Errorf("plan only %v: %s reads %q, want %q", c.planOnly, p, got, want)
			}
		}
	}
}
