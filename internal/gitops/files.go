package gitops

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/go-git/go-git/v5/plumbing"
)

// WriteFiles commits files (path -> content; nil content removes the file) onto branch of
// the repository at location, as one commit with message, and publishes it like Apply:
// compare-and-swap (local) or fast-forward push (remote), re-read and retried when the
// branch moved; or, with co.HeadBranch, to that new branch (for a pull request). It
// returns the zero hash when the files already have that content.
func (w *Writer) WriteFiles(ctx context.Context, location, branch string, files map[string][]byte, message string, co CommitOptions) (plumbing.Hash, error) {
	repo, err := openRepository(ctx, location, w.opts.CacheDir, w.opts.Logger)
	if err != nil {
		return plumbing.ZeroHash, err
	}
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
	g, err := repo.open()
	if err != nil {
		return plumbing.ZeroHash, plumbing.ZeroHash, err
	}
	var root plumbing.Hash
	if !tip.IsZero() {
		c, err := g.CommitObject(tip)
		if err != nil {
			return plumbing.ZeroHash, plumbing.ZeroHash, err
		}
		root = c.TreeHash
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
	repo, err := openRepository(ctx, location, w.opts.CacheDir, w.opts.Logger)
	if err != nil {
		return nil, plumbing.ZeroHash, false, err
	}
	tip, err := repo.tip(ctx, branch)
	if err != nil || tip.IsZero() {
		return nil, tip, false, err
	}
	g, err := repo.open()
	if err != nil {
		return nil, tip, false, err
	}
	c, err := g.CommitObject(tip)
	if err != nil {
		return nil, tip, false, err
	}
	f, err := c.File(path)
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
