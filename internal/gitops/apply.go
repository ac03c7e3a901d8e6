package gitops

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/storer"
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

// Plan computes what applying in would change, without writing anything.
func (w *Writer) Plan(ctx context.Context, in Input) (*Plan, error) {
	repo, err := openRepository(ctx, in.Target.Repo, w.opts.CacheDir, w.opts.Credentials, w.opts.Logger)
	if err != nil {
		return nil, err
	}
	return makePlan(ctx, repo, in, &w.opts)
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
	repo, err := openRepository(ctx, in.Target.Repo, w.opts.CacheDir, w.opts.Credentials, w.opts.Logger)
	if err != nil {
		return nil, err
	}
	repo.removeStaleTmp(time.Now())
	if co.MaxAttempts <= 0 {
		co.MaxAttempts = DefaultMaxAttempts
	}
	res := &Result{}
	for res.Attempts = 1; res.Attempts <= co.MaxAttempts; res.Attempts++ {
		p, err := makePlan(ctx, repo, in, &w.opts)
		if err != nil {
			return nil, err
		}
		res.Plan = p
		if p.NoChange() {
			return res, nil
		}
		if p.MassDelete != nil && !w.opts.AllowMassDelete {
			return res, fmt.Errorf("%w: %w", ErrRefused, p.MassDelete)
		}
		if err := ctx.Err(); err != nil {
			return nil, err // stopped: nothing is written
		}
		commit, err := p.writeCommit(in, co)
		if err != nil {
			return nil, err
		}
		if err := ctx.Err(); err != nil {
			return nil, err // stopped: the objects stay unreferenced, the branch does not move
		}
		branch, old := in.Target.Branch, p.Base
		if co.HeadBranch != "" {
			branch, old = co.HeadBranch, plumbing.ZeroHash
		}
		err = repo.publish(ctx, branch, commit, old)
		if errors.Is(err, ErrConflict) && co.HeadBranch == "" {
			w.opts.Logger.InfoContext(ctx, "branch moved, planning again", "branch", branch, "attempt", res.Attempts)
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("publish %s: %w", branch, err)
		}
		res.Commit, res.Branch = commit, branch
		return res, nil
	}
	res.Attempts = co.MaxAttempts
	return res, fmt.Errorf("%w after %d attempts: others keep writing to %s", ErrConflict, co.MaxAttempts, in.Target.Branch)
}

// writeCommit writes the plan's objects and a commit on top of its base into the
// repository (the branch is not moved yet).
func (p *Plan) writeCommit(in Input, co CommitOptions) (plumbing.Hash, error) {
	return commitEdits(p.repo, p.git.Storer, p.editor, p.pack, p.Base, p.message(in, co.Subject), co)
}

// commitEdits writes the edited tree, a commit with parent base (none when zero), and the
// objects they need into the repository as one pack, and returns the commit.
func commitEdits(repo *repository, objects storer.EncodedObjectStorer, ed *treeEditor, pk *pack, base plumbing.Hash, message string, co CommitOptions) (plumbing.Hash, error) {
	root := ed.write(pk)
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
	c := &object.Commit{Author: sig, Committer: sig, Message: message, TreeHash: root}
	if !base.IsZero() {
		c.ParentHashes = []plumbing.Hash{base}
	}
	obj := objects.NewEncodedObject()
	if err := c.Encode(obj); err != nil {
		return plumbing.ZeroHash, err
	}
	data, err := readObject(obj)
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("encode commit: %w", err)
	}
	h := pk.add(plumbing.CommitObject, data)
	if _, err := pk.write(filepath.Join(repo.gitDir, "objects"), repo.logger); err != nil {
		return plumbing.ZeroHash, err
	}
	return h, nil
}

// readObject returns the content of an encoded object.
func readObject(obj plumbing.EncodedObject) (data []byte, err error) {
	r, err := obj.Reader()
	if err != nil {
		return nil, err
	}
	defer func() {
		if cerr := r.Close(); err == nil {
			err = cerr
		}
	}()
	data = make([]byte, obj.Size())
	_, err = io.ReadFull(r, data)
	return data, err
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
	repo, err := openRepository(ctx, repoURL, w.opts.CacheDir, w.opts.Credentials, w.opts.Logger)
	if err != nil {
		return err
	}
	return repo.deleteBranch(ctx, branch)
}
