package gitops

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// WriteFiles commits files (path -> content; nil content removes the file) onto branch of
// the repository at location, as one commit with message, and publishes it like Apply:
// compare-and-swap (local) or fast-forward push (remote), re-read and retried when the
// branch moved; or, with co.HeadBranch, to that new branch (for a pull request). It
// returns the zero hash when the files already have that content.
func (w *Writer) WriteFiles(ctx context.Context, location, branch string, files map[string][]byte, message string, co CommitOptions) (plumbing.Hash, error) {
	repo, err := openRepository(ctx, location, w.opts.CacheDir, w.opts.Credentials, w.opts.Logger)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	repo.removeStaleTmp(time.Now())
	if co.MaxAttempts <= 0 {
		co.MaxAttempts = DefaultMaxAttempts
	}
	for range co.MaxAttempts {
		commit, base, err := writeFilesOnce(ctx, repo, branch, files, message, co)
		if err != nil || commit.IsZero() {
			return commit, err
		}
		dest, old := co.destination(branch, base)
		err = repo.publish(ctx, dest, commit, old)
		if errors.Is(err, ErrConflict) && co.HeadBranch == "" {
			continue
		}
		return commit, err
	}
	return plumbing.ZeroHash, fmt.Errorf("%w after %d attempts: others keep writing to %s", ErrConflict, co.MaxAttempts, branch)
}

func writeFilesOnce(ctx context.Context, repo *repository, branch string, files map[string][]byte, message string, co CommitOptions) (plumbing.Hash, plumbing.Hash, error) {
	tip, err := repo.tip(ctx, branch)
	if err != nil {
		return plumbing.ZeroHash, plumbing.ZeroHash, err
	}
	g, root, err := repo.openAt(tip)
	if err != nil {
		return plumbing.ZeroHash, plumbing.ZeroHash, err
	}
	ed, pk := newTreeEditor(g.Storer, root), newPack()
	changed := false
	for _, p := range slices.Sorted(maps.Keys(files)) {
		content := files[p]
		if content == nil {
			removed, err := ed.remove(p)
			if err != nil {
				return plumbing.ZeroHash, plumbing.ZeroHash, err
			}
			changed = changed || len(removed) > 0
			continue
		}
		action, _, err := ed.setFile(p, objectHash(plumbing.BlobObject, content))
		if err != nil {
			return plumbing.ZeroHash, plumbing.ZeroHash, err
		}
		if action != actionNone {
			pk.add(plumbing.BlobObject, content)
			changed = true
		}
	}
	if !changed {
		return plumbing.ZeroHash, tip, nil
	}
	commit, err := commitEdits(repo, g.Storer, ed, pk, tip, message, co)
	return commit, tip, err
}

// ReadFile reads a file at the tip of a branch; ok is false when the branch or the file
// does not exist.
func (w *Writer) ReadFile(ctx context.Context, location, branch, path string) (content []byte, commit plumbing.Hash, ok bool, err error) {
	repo, err := openRepository(ctx, location, w.opts.CacheDir, w.opts.Credentials, w.opts.Logger)
	if err != nil {
		return nil, plumbing.ZeroHash, false, err
	}
	tip, err := repo.tip(ctx, branch)
	if err != nil || tip.IsZero() {
		return nil, tip, false, err
	}
	g, root, err := repo.openAt(tip)
	if err != nil {
		return nil, tip, false, err
	}
	tree, err := g.TreeObject(root)
	if err != nil {
		return nil, tip, false, err
	}
	f, err := tree.File(path)
	if err != nil {
		return nil, tip, false, nil //nolint:nilerr // a missing file is not an error here
	}
	s, err := f.Contents()
	return []byte(s), tip, err == nil, err
}

// destination is where a commit on top of base is published: the branch itself (moved
// from base), or the new HeadBranch.
func (co CommitOptions) destination(branch string, base plumbing.Hash) (string, plumbing.Hash) {
	if co.HeadBranch != "" {
		return co.HeadBranch, plumbing.ZeroHash
	}
	return branch, base
}

// Folders lists, at the tip of a branch, the folders under path and the folders inside each
// (in the GitOps layout: cluster types and their deployment targets), leaving out hidden
// folders such as .github. commit is the zero hash when the branch does not exist.
func (w *Writer) Folders(ctx context.Context, location, branch, path string) (commit plumbing.Hash, folders map[string][]string, err error) {
	repo, err := openRepository(ctx, location, w.opts.CacheDir, w.opts.Credentials, w.opts.Logger)
	if err != nil {
		return plumbing.ZeroHash, nil, err
	}
	tip, err := repo.tip(ctx, branch)
	if err != nil || tip.IsZero() {
		return tip, nil, err
	}
	g, err := repo.open()
	if err != nil {
		return tip, nil, err
	}
	c, err := g.CommitObject(tip)
	if err != nil {
		return tip, nil, err
	}
	root, err := c.Tree()
	if err == nil && strings.Trim(path, "/") != "" {
		root, err = root.Tree(strings.Trim(path, "/"))
	}
	if errors.Is(err, object.ErrDirectoryNotFound) {
		return tip, map[string][]string{}, nil
	} else if err != nil {
		return tip, nil, err
	}
	folders = map[string][]string{}
	for _, e := range root.Entries {
		if e.Mode != filemode.Dir || strings.HasPrefix(e.Name, ".") {
			continue
		}
		sub, err := root.Tree(e.Name)
		if err != nil {
			return tip, nil, err
		}
		inner := []string{}
		for _, s := range sub.Entries {
			if s.Mode == filemode.Dir {
				inner = append(inner, s.Name)
			}
		}
		folders[e.Name] = inner
	}
	return tip, folders, nil
}
