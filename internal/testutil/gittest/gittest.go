// Package gittest builds real git repositories in temporary directories for tests:
// commits made of file maps on named branches, in bare or non-bare repositories.
package gittest

import (
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/storage"
)

// Repo is a git repository on disk.
type Repo struct {
	Dir string
	Git *git.Repository
}

// URL returns the file:// URL of the repository.
func (r *Repo) URL() string { return "file://" + r.Dir }

// NewBare creates an empty bare repository in a temporary directory.
func NewBare(tb testing.TB) *Repo {
	tb.Helper()
	return newRepo(tb, true)
}

// New creates an empty non-bare repository in a temporary directory.
func New(tb testing.TB) *Repo {
	tb.Helper()
	return newRepo(tb, false)
}

func newRepo(tb testing.TB, bare bool) *Repo {
	tb.Helper()
	r, err := InitRepo(tb.TempDir(), bare)
	if err != nil {
		tb.Fatalf("init repository: %v", err)
	}
	return r
}

// InitRepo creates an empty repository in dir whose HEAD is branch main.
func InitRepo(dir string, bare bool) (*Repo, error) {
	g, err := git.PlainInitWithOptions(dir, &git.PlainInitOptions{
		Bare:        bare,
		InitOptions: git.InitOptions{DefaultBranch: plumbing.NewBranchReferenceName("main")},
	})
	if err != nil {
		return nil, err
	}
	return &Repo{Dir: dir, Git: g}, nil
}

// Commit writes files (path -> content) as the complete tree of a new commit on branch,
// whose parent is the branch's current tip (if any), and returns the commit hash.
func (r *Repo) Commit(tb testing.TB, branch string, files map[string]string) plumbing.Hash {
	tb.Helper()
	h, err := CommitFiles(r.Git.Storer, branch, files, "test commit")
	if err != nil {
		tb.Fatalf("commit on %s: %v", branch, err)
	}
	return h
}

// CommitDir commits the files of a directory on disk as the complete tree of branch.
func (r *Repo) CommitDir(tb testing.TB, branch, dir string) plumbing.Hash {
	tb.Helper()
	return r.Commit(tb, branch, ReadDir(tb, dir))
}

// ReadDir reads every regular file under dir into a map keyed by slash-separated paths.
func ReadDir(tb testing.TB, dir string) map[string]string {
	tb.Helper()
	files, err := readDir(dir)
	if err != nil {
		tb.Fatalf("read %s: %v", dir, err)
	}
	return files
}

func readDir(dir string) (map[string]string, error) {
	files := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
		if err != nil || !e.Type().IsRegular() {
			return err
		}
		data, err := os.ReadFile(p) //nolint:gosec // a test helper reading a test's temporary folder
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		files[filepath.ToSlash(rel)] = string(data)
		return nil
	})
	return files, err
}

// CommitFiles writes files as the full tree of a new commit on branch in storer.
func CommitFiles(s storage.Storer, branch string, files map[string]string, msg string) (plumbing.Hash, error) {
	root, err := writeTree(s, files, "")
	if err != nil {
		return plumbing.ZeroHash, err
	}
	ref := plumbing.NewBranchReferenceName(branch)
	var parents []plumbing.Hash
	if cur, err := s.Reference(ref); err == nil {
		parents = append(parents, cur.Hash())
	}
	sig := object.Signature{Name: "test", Email: "test@example.com", When: time.Unix(1700000000, 0).UTC()}
	c := &object.Commit{Author: sig, Committer: sig, Message: msg, TreeHash: root, ParentHashes: parents}
	obj := s.NewEncodedObject()
	if err := c.Encode(obj); err != nil {
		return plumbing.ZeroHash, err
	}
	h, err := s.SetEncodedObject(obj)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	return h, s.SetReference(plumbing.NewHashReference(ref, h))
}

func writeTree(s storage.Storer, files map[string]string, prefix string) (plumbing.Hash, error) {
	children := map[string]bool{} // name -> isDir
	for p := range files {
		rest, ok := strings.CutPrefix(p, prefix)
		if !ok {
			continue
		}
		name, _, isDir := strings.Cut(rest, "/")
		children[name] = children[name] || isDir
	}
	names := make([]string, 0, len(children))
	for n := range children {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool {
		return treeSortKey(names[i], children[names[i]]) < treeSortKey(names[j], children[names[j]])
	})
	tree := &object.Tree{}
	for _, n := range names {
		var h plumbing.Hash
		var err error
		mode := filemode.Regular
		if children[n] {
			h, err = writeTree(s, files, path.Join(prefix, n)+"/")
			mode = filemode.Dir
		} else {
			h, err = writeBlob(s, files[prefix+n])
		}
		if err != nil {
			return plumbing.ZeroHash, err
		}
		tree.Entries = append(tree.Entries, object.TreeEntry{Name: n, Mode: mode, Hash: h})
	}
	obj := s.NewEncodedObject()
	if err := tree.Encode(obj); err != nil {
		return plumbing.ZeroHash, err
	}
	return s.SetEncodedObject(obj)
}

// treeSortKey orders entries as git does: directories sort as if their name ended in "/".
func treeSortKey(name string, dir bool) string {
	if dir {
		return name + "/"
	}
	return name
}

func writeBlob(s storage.Storer, content string) (plumbing.Hash, error) {
	obj := s.NewEncodedObject()
	obj.SetType(plumbing.BlobObject)
	w, err := obj.Writer()
	if err != nil {
		return plumbing.ZeroHash, err
	}
	if _, err := w.Write([]byte(content)); err != nil {
		return plumbing.ZeroHash, err
	}
	if err := w.Close(); err != nil {
		return plumbing.ZeroHash, err
	}
	return s.SetEncodedObject(obj)
}

// Files reads the tree at the tip of branch into a map keyed by slash-separated paths. It
// opens the repository afresh, so objects written by other processes or writers are seen.
func (r *Repo) Files(tb testing.TB, branch string) map[string]string {
	tb.Helper()
	g, tip := r.tip(tb, branch)
	if tip.IsZero() {
		tb.Fatalf("branch %s does not exist in %s", branch, r.Dir)
	}
	c, err := g.CommitObject(tip)
	if err != nil {
		tb.Fatalf("commit %s: %v", tip, err)
	}
	files := map[string]string{}
	iter, err := c.Files()
	if err != nil {
		tb.Fatalf("tree of %s: %v", tip, err)
	}
	err = iter.ForEach(func(f *object.File) error {
		s, err := f.Contents()
		files[f.Name] = s
		return err
	})
	if err != nil {
		tb.Fatalf("read the tree of %s: %v", tip, err)
	}
	return files
}

// Tip returns the commit at the tip of branch (zero when the branch does not exist).
func (r *Repo) Tip(tb testing.TB, branch string) plumbing.Hash {
	tb.Helper()
	_, tip := r.tip(tb, branch)
	return tip
}

// tip opens the repository afresh and returns it with the tip of branch (zero when the
// branch does not exist).
func (r *Repo) tip(tb testing.TB, branch string) (*git.Repository, plumbing.Hash) {
	tb.Helper()
	g, err := git.PlainOpen(r.Dir)
	if err != nil {
		tb.Fatalf("open %s: %v", r.Dir, err)
	}
	ref, err := g.Reference(plumbing.NewBranchReferenceName(branch), true)
	if err != nil {
		return g, plumbing.ZeroHash
	}
	return g, ref.Hash()
}
