package gitrepo

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
)

// ErrNotRemote means an operation that needs a remote repository got a local one.
var ErrNotRemote = errors.New("not a remote repository")

// GitDir is where the repository's objects and refs are: the repository itself, or the bare
// cache clone of a remote one.
func (r *Repo) GitDir() string { return r.gitDir }

// Mirror makes the cache clone of a remote repository a mirror of its branches: every
// branch of the remote at its tip under refs/heads (branches gone from the remote are
// removed), and HEAD naming the remote's default branch. A local repository is left as is.
func (r *Repo) Mirror(ctx context.Context) error {
	if r.remote == "" {
		return nil
	}
	out, err := r.git(ctx, "ls-remote", "--symref", r.remote, "HEAD")
	if err != nil {
		return err
	}
	if _, err := r.git(ctx, "fetch", "--quiet", "--prune", "--no-tags", r.remote, "+refs/heads/*:refs/heads/*"); err != nil {
		return err
	}
	for line := range strings.Lines(string(out)) {
		target, ok := strings.CutPrefix(line, "ref: ")
		if head, _, cut := strings.Cut(target, "\t"); ok && cut && strings.HasPrefix(head, "refs/heads/") {
			_, err = r.git(ctx, "symbolic-ref", "HEAD", head)
			return err
		}
	}
	return nil
}

// Update moves a branch from Old (zero: the branch must not exist) to Commit.
type Update struct {
	Branch      string
	Commit, Old plumbing.Hash
}

// PushAll moves the branches of a remote repository as one atomic push, each with a
// compare-and-swap: the push succeeds only when every branch is still at its Old, and
// fails with ErrConflict, moving none, when one moved. The cache clone's branches are then
// set to what was pushed.
func (r *Repo) PushAll(ctx context.Context, updates []Update) error {
	if r.remote == "" {
		return fmt.Errorf("push to %s: %w", r.location, ErrNotRemote)
	}
	if len(updates) == 0 {
		return nil
	}
	args := []string{"push", "--quiet", "--porcelain", "--atomic"}
	specs := make([]string, 0, len(updates))
	for _, u := range updates {
		old := u.Old.String()
		if u.Old.IsZero() {
			old = "" // git: the branch must not exist yet
		}
		args = append(args, "--force-with-lease=refs/heads/"+u.Branch+":"+old)
		specs = append(specs, u.Commit.String()+":refs/heads/"+u.Branch)
	}
	args = append(append(args, r.remote), specs...)
	if _, err := r.git(ctx, args...); err != nil {
		if isPushConflict(err.Error()) {
			return fmt.Errorf("%w: %w", ErrConflict, err)
		}
		return err
	}
	for _, u := range updates {
		if _, err := r.git(ctx, "update-ref", "refs/heads/"+u.Branch, u.Commit.String()); err != nil {
			return fmt.Errorf("pushed, but the cache clone: %w", err)
		}
	}
	return nil
}
