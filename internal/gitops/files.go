package gitops

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/fleetform/fleetform/internal/gitops/gitrepo"
)

// WriteFiles commits files (path -> content; nil content removes the file) onto branch of
// the repository at location, as one commit with message, and publishes it like Apply:
// compare-and-swap (local) or fast-forward push (remote), re-read and retried when the
// branch moved (unless co.Base says which tip the files were made against); or, with
// co.HeadBranch, to that new branch (for a pull request). It returns the zero hash when the
// files already have that content. Every write of control-plane files goes through here:
// promotion pins, and the changes made with `fleetform add`, `set` and the authoring API.
func (w *Writer) WriteFiles(ctx context.Context, location, branch string, files map[string][]byte, message string, co CommitOptions) (plumbing.Hash, error) {
	repo, err := w.open(ctx, location)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	repo.RemoveStaleTemporaryFiles(time.Now())
	if co.MaxAttempts <= 0 {
		co.MaxAttempts = DefaultMaxAttempts
	}
	attempts := co.MaxAttempts
	if co.HeadBranch != "" || co.Base != nil {
		attempts = 1 // a new branch of its own, or files made against one tip: not to retry here
	}
	var commit plumbing.Hash
	err = gitrepo.Retry(ctx, attempts, branch, w.opts.Logger, func(int) error {
		var base plumbing.Hash
		commit, base, err = repo.WriteFiles(ctx, branch, files, message, co.signature())
		switch {
		case err != nil:
			return err
		case co.Base != nil && base != *co.Base:
			return fmt.Errorf("%w: %s is no longer at %s", ErrConflict, branch, *co.Base)
		case commit.IsZero():
			return nil
		}
		dest, old := co.destination(branch, base)
		return repo.PublishFiles(ctx, dest, commit, old, files)
	})
	if err != nil && errors.Is(err, ErrConflict) && co.HeadBranch == "" {
		return plumbing.ZeroHash, err
	}
	return commit, err
}

// EditFile changes one file on branch, as one commit with message published like
// WriteFiles: edit gets the file's content at the branch's tip (nil when the branch or the
// file does not exist) and returns its new content. When the branch moved in between, the
// file is read again and edited again on the new tip (up to co.MaxAttempts times), so that
// a change someone else made to the file meanwhile is kept, never overwritten with content
// made from the version before it. An error of edit ends the edit, and nothing is written.
func (w *Writer) EditFile(ctx context.Context, location, branch, path string, edit func(old []byte) ([]byte, error), message string,
	co CommitOptions) (plumbing.Hash, error) {
	attempts := co.MaxAttempts
	if attempts <= 0 {
		attempts = DefaultMaxAttempts
	}
	var commit plumbing.Hash
	err := gitrepo.Retry(ctx, attempts, branch, w.opts.Logger, func(int) error {
		old, tip, _, err := w.ReadFile(ctx, location, branch, path)
		if err != nil {
			return err
		}
		content, err := edit(old)
		if err != nil {
			return err
		}
		once := co
		once.Base = &tip
		commit, err = w.WriteFiles(ctx, location, branch, map[string][]byte{path: content}, message, once)
		return err
	})
	if err != nil {
		return plumbing.ZeroHash, err
	}
	return commit, nil
}

// ReadFile reads a file at the tip of a branch; ok is false when the branch or the file
// does not exist.
func (w *Writer) ReadFile(ctx context.Context, location, branch, path string) (content []byte, commit plumbing.Hash, ok bool, err error) {
	repo, err := w.open(ctx, location)
	if err != nil {
		return nil, plumbing.ZeroHash, false, err
	}
	return repo.ReadFile(ctx, branch, path)
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
	repo, err := w.open(ctx, location)
	if err != nil {
		return plumbing.ZeroHash, nil, err
	}
	return repo.Folders(ctx, branch, path)
}
