package gitops

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/fleetform/fleetform/internal/gitops/gitrepo"
)

// DefaultMaxAttempts bounds how many times an apply re-reads and re-plans after someone
// else wrote to the branch in between.
const DefaultMaxAttempts = 5

// Writer plans and applies environment trees to GitOps repositories.
type Writer struct {
	opts Options
}

// NewWriter returns a Writer.
func NewWriter(opts Options) *Writer {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.CacheDir == "" {
		if dir, err := os.UserCacheDir(); err == nil {
			opts.CacheDir = filepath.Join(dir, "fleetform", "gitops")
		} else {
			opts.CacheDir = filepath.Join(os.TempDir(), "fleetform-gitops")
		}
	}
	return &Writer{opts: opts}
}

// open opens the repository at location through the git plumbing.
func (w *Writer) open(ctx context.Context, location string) (*gitrepo.Repo, error) {
	return gitrepo.Open(ctx, location, w.opts.CacheDir, w.opts.Credentials, w.opts.Logger)
}

// Plan computes what applying in would change, without writing anything.
func (w *Writer) Plan(ctx context.Context, in Input) (*Plan, error) {
	repo, err := w.open(ctx, in.Target.Repo)
	if err != nil {
		return nil, err
	}
	return makePlan(ctx, repo, in, &w.opts, true)
}

// Tip returns the tip of branch in the repository at location (zero: no such branch), for
// an apply that finds nothing to write: like Apply, it first removes what an apply killed
// over an hour ago left behind.
func (w *Writer) Tip(ctx context.Context, location, branch string) (plumbing.Hash, error) {
	repo, err := w.open(ctx, location)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	repo.RemoveStaleTemporaryFiles(time.Now())
	return repo.Tip(ctx, branch)
}

// CommitOptions say how the commit is made and where it goes.
type CommitOptions struct {
	AuthorName  string
	AuthorEmail string
	// Subject replaces the first line of the generated commit message.
	Subject string
	// MaxAttempts bounds the retries after a conflict (default DefaultMaxAttempts).
	MaxAttempts int
	// HeadBranch, when set, publishes the commit to this new branch instead of the target
	// branch (for a pull request); the target branch is not changed.
	HeadBranch string
	// Base, when set, is the tip the files written were made against (WriteFiles; the zero
	// hash: no branch yet): the branch is moved only from there, and a branch that moved is
	// ErrConflict at once, for the caller to make its change again on the new tip.
	Base *plumbing.Hash
	// Now stamps the commit (default time.Now).
	Now func() time.Time
}

// Result is what an apply did.
type Result struct {
	Plan *Plan
	// Commit is zero when nothing was written (no change, or refused).
	Commit plumbing.Hash
	// Branch is where the commit was published.
	Branch   string
	Attempts int
}

// ErrRefused wraps the reasons an apply refuses to write (a mass deletion).
var ErrRefused = errors.New("apply refused")

// Apply plans and writes the change as one commit. When the branch moved in between, it
// re-reads and re-plans, up to MaxAttempts times. A plan that removes too many owned
// folders is refused (ErrRefused) unless Options.AllowMassDelete.
func (w *Writer) Apply(ctx context.Context, in Input, co CommitOptions) (*Result, error) {
	repo, err := w.open(ctx, in.Target.Repo)
	if err != nil {
		return nil, err
	}
	repo.RemoveStaleTemporaryFiles(time.Now())
	if co.MaxAttempts <= 0 {
		co.MaxAttempts = DefaultMaxAttempts
	}
	attempts := co.MaxAttempts
	if co.HeadBranch != "" {
		attempts = 1 // a new branch of its own: a conflict there is no race to retry
	}
	res := &Result{}
	err = gitrepo.Retry(ctx, attempts, in.Target.Branch, w.opts.Logger, func(attempt int) error {
		res.Attempts = attempt
		return w.attempt(ctx, repo, in, co, res)
	})
	switch {
	case err == nil:
		return res, nil
	case errors.Is(err, ErrRefused), errors.Is(err, ErrConflict) && co.HeadBranch == "":
		return res, err
	}
	return nil, err
}

// attempt plans the change on the branch's tip and publishes it as one commit, moving the
// branch only from that tip (ErrConflict when it moved). res gets the plan, and the commit.
func (w *Writer) attempt(ctx context.Context, repo *gitrepo.Repo, in Input, co CommitOptions, res *Result) error {
	p, err := makePlan(ctx, repo, in, &w.opts, false)
	if err != nil {
		return err
	}
	defer p.tree.Discard() // the objects of a plan not committed (nothing once committed)
	res.Plan = p
	if p.NoChange() {
		return nil
	}
	if p.MassDelete != nil && !w.opts.AllowMassDelete {
		return fmt.Errorf("%w: %w", ErrRefused, p.MassDelete)
	}
	if err := ctx.Err(); err != nil {
		return err // stopped: nothing is written
	}
	commit, err := p.writeCommit(in, co)
	if err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err // stopped: the objects stay unreferenced, the branch does not move
	}
	branch, old := in.Target.Branch, p.Base
	if co.HeadBranch != "" {
		branch, old = co.HeadBranch, plumbing.ZeroHash
	}
	if err := repo.Publish(ctx, branch, commit, old); err != nil {
		if errors.Is(err, ErrConflict) && co.HeadBranch == "" {
			return err // the branch moved: planned again on its new tip
		}
		return fmt.Errorf("publish %s: %w", branch, err)
	}
	res.Commit, res.Branch = commit, branch
	return nil
}

// writeCommit writes the plan's objects and a commit on top of its base into the
// repository (the branch is not moved yet).
func (p *Plan) writeCommit(in Input, co CommitOptions) (plumbing.Hash, error) {
	return p.tree.Commit(p.Base, p.message(in, co.Subject), co.signature())
}

// signature is the commit's author and committer: fleetform <fleetform@localhost> unless
// set, stamped now.
func (co CommitOptions) signature() object.Signature {
	now := time.Now
	if co.Now != nil {
		now = co.Now
	}
	sig := object.Signature{Name: co.AuthorName, Email: co.AuthorEmail, When: now()}
	if sig.Name == "" {
		sig.Name = "fleetform"
	}
	if sig.Email == "" {
		sig.Email = "fleetform@localhost"
	}
	return sig
}

// message names the control-plane commits and summarises the change.
func (p *Plan) message(in Input, subject string) string {
	rev := in.Snapshot.Revisions
	if subject == "" {
		subject = fmt.Sprintf("fleetform: apply %s", p.Environment)
		if rev.Environment != "" {
			subject += " from control plane " + short(rev.Environment)
		}
	}
	var b strings.Builder
	b.WriteString(subject)
	b.WriteString("\n\n")
	counts := map[string]int{}
	for _, c := range p.Changes {
		counts[c.Action]++
	}
	fmt.Fprintf(&b, "%d file(s) added, %d modified, %d deleted; %d assignment(s) added, %d removed, %d re-rendered.\n",
		counts["add"], counts["modify"], counts["delete"], len(p.AssignmentsAdded), len(p.AssignmentsRemoved), p.Rendered)
	if n := len(p.ClusterTypesAffected); n > 0 {
		shown := p.ClusterTypesAffected[:min(n, 20)]
		fmt.Fprintf(&b, "Cluster types: %s", strings.Join(shown, ", "))
		if n > len(shown) {
			fmt.Fprintf(&b, " and %d more", n-len(shown))
		}
		b.WriteString(".\n")
	}
	fmt.Fprintf(&b, "\nFleetform-Environment: %s\n", p.Environment)
	if rev.Environment != "" {
		fmt.Fprintf(&b, "Control-Plane-Commit: %s\n", rev.Environment)
	}
	if rev.Common != "" {
		fmt.Fprintf(&b, "Common-Commit: %s\n", rev.Common)
	}
	return b.String()
}

func short(h string) string { return h[:min(len(h), 12)] }

// DeleteBranch deletes a branch of the target repository (fleetform's own pull-request
// branches).
func (w *Writer) DeleteBranch(ctx context.Context, repoURL, branch string) error {
	repo, err := w.open(ctx, repoURL)
	if err != nil {
		return err
	}
	return repo.DeleteBranch(ctx, branch)
}
