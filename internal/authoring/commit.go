package authoring

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/fleetform/fleetform/internal/forge"
	"github.com/fleetform/fleetform/internal/gitops/gitrepo"
	"github.com/fleetform/fleetform/internal/repourl"
)

// gitCredentials choose the credential for a push (gitauth.Store).
type gitCredentials = gitrepo.Credentials

// branchOrder puts the common branch last: an environment's branch exists before the
// declaration that names it.
func (ws *workspace) branchOrder() []string {
	groups := ws.byBranch()
	branches := slices.Sorted(maps.Keys(groups))
	slices.SortStableFunc(branches, func(a, b string) int {
		ca, cb := a == ws.commonBranch(), b == ws.commonBranch()
		switch {
		case ca && !cb:
			return 1
		case cb && !ca:
			return -1
		}
		return 0
	})
	return branches
}

// signatures are the author and the committer of the change's commits, at one time.
func (ws *workspace) signatures(req Request) (author, committer object.Signature) {
	author, committer = req.Author, req.Committer
	if author.Name == "" {
		author.Name, author.Email = "fleetform", "fleetform@localhost"
	}
	if committer.Name == "" {
		committer = author
	}
	author.When = time.Now()
	committer.When = author.When
	return author, committer
}

// commit commits the change on each branch it touches, with a compare-and-swap on each.
// When a branch fails, the branches the change already moved are moved back, so that a
// failed change leaves no part of itself behind.
func (ws *workspace) commit(ctx context.Context, req Request, msg string) ([]CommitRef, error) {
	groups := ws.byBranch()
	var out []CommitRef
	for _, branch := range ws.branchOrder() {
		var h plumbing.Hash
		var err error
		if ws.workTree != "" && branch == ws.head {
			h, err = ws.commitWorkTree(ctx, req, groups[branch], msg)
		} else {
			h, err = ws.commitBranch(ctx, req, branch, groups[branch], msg)
		}
		if err != nil {
			return nil, ws.undo(ctx, req, out, err)
		}
		if !h.IsZero() {
			out = append(out, CommitRef{Branch: branch, Commit: h.String()})
		}
	}
	return out, nil
}

// undo moves back the branches a failed change moved (made), newest first, each only from
// the commit the change made to the tip it was made on, and returns err; when one cannot be
// moved back (it is the work tree's, or someone wrote on it since), err says which commits
// stay.
func (ws *workspace) undo(ctx context.Context, req Request, made []CommitRef, err error) error {
	if len(made) == 0 {
		return err
	}
	repo, openErr := gitrepo.Open(ctx, ws.location, "", nil, req.Logger)
	var stay []string
	for i := len(made) - 1; i >= 0; i-- {
		m := made[i]
		if openErr != nil || (ws.workTree != "" && m.Branch == ws.head) ||
			repo.Unpublish(context.WithoutCancel(ctx), m.Branch, plumbing.NewHash(m.Commit), ws.tips[m.Branch]) != nil {
			stay = append(stay, m.Commit[:12]+" on "+m.Branch)
		}
	}
	if len(stay) == 0 {
		return err
	}
	return fmt.Errorf("%w (and the commits it made before stay: %s; revert them by hand)", err, strings.Join(stay, ", "))
}

// commitBranch commits the files on a branch that is not checked out, moving it only from
// the tip the change was made against.
func (ws *workspace) commitBranch(ctx context.Context, req Request, branch string, files map[string][]byte, msg string) (plumbing.Hash, error) {
	if _, err := ws.tree(branch); err != nil { // the tip, for a branch only written to
		return plumbing.ZeroHash, err
	}
	repo, err := gitrepo.Open(ctx, ws.location, "", nil, req.Logger)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	repo.RemoveStaleTemporaryFiles(time.Now())
	author, committer := ws.signatures(req)
	base := ws.tips[branch]
	commit, err := repo.WriteFilesOn(base, files, msg, author, committer)
	if err != nil || commit.IsZero() {
		return commit, err
	}
	err = repo.Publish(ctx, branch, commit, base)
	if errors.Is(err, gitrepo.ErrConflict) {
		return plumbing.ZeroHash, &movedError{branch: branch}
	}
	return commit, err
}

// dirtyError is a file of the work tree that differs from its branch: someone's uncommitted
// edit, or another writer's change being written. It is a conflict: the change is made
// again on what the branch then holds, and fails as one if it stays.
type dirtyError struct{ file, workTree string }

func (e *dirtyError) Error() string {
	return fmt.Sprintf("%s has uncommitted changes in %s: commit or discard them first", e.file, e.workTree)
}

// Unwrap makes it a conflict (ErrConflict, and the git writer's, which Apply retries on).
func (e *dirtyError) Unwrap() []error { return []error{ErrConflict, gitrepo.ErrConflict} }

// commitWorkTree commits the files on the branch checked out in the work tree (a commit
// on top of the tip read, the branch moved with a compare-and-swap), then writes them into
// the work tree and its index, so that the work tree stays in step with its branch. Other
// files and index entries are left as they are; a file with uncommitted edits is refused.
func (ws *workspace) commitWorkTree(ctx context.Context, req Request, files map[string][]byte, msg string) (plumbing.Hash, error) {
	for _, p := range slices.Sorted(maps.Keys(files)) {
		old, had, err := ws.base(fileKey{ws.head, p})
		if err != nil {
			return plumbing.ZeroHash, err
		}
		disk, err := os.ReadFile(filepath.Join(ws.workTree, filepath.FromSlash(p)))
		if (err == nil) != had || string(disk) != string(old) {
			return plumbing.ZeroHash, &dirtyError{file: p, workTree: ws.workTree}
		}
	}
	repo, err := gitrepo.Open(ctx, ws.location, "", nil, req.Logger)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	author, committer := ws.signatures(req)
	commit, err := repo.WriteFilesOn(ws.tips[ws.head], files, msg, author, committer)
	if err != nil || commit.IsZero() {
		return commit, err
	}
	branch := plumbing.NewBranchReferenceName(ws.head)
	err = ws.g.Storer.CheckAndSetReference(plumbing.NewHashReference(branch, commit), plumbing.NewHashReference(branch, ws.tips[ws.head]))
	if err != nil {
		return plumbing.ZeroHash, &movedError{branch: ws.head}
	}
	if err := applyToDir(ws.workTree, onBranch(files, ws.head)); err != nil {
		return plumbing.ZeroHash, err
	}
	fresh, err := git.PlainOpenWithOptions(ws.workTree, &git.PlainOpenOptions{EnableDotGitCommonDir: true}) // sees the new pack
	if err != nil {
		return commit, err
	}
	wt, err := fresh.Worktree()
	if err != nil {
		return commit, err
	}
	for _, p := range slices.Sorted(maps.Keys(files)) {
		if files[p] == nil {
			_, err = wt.Remove(p)
		} else {
			_, err = wt.Add(p)
		}
		if err != nil {
			return commit, fmt.Errorf("committed %s, but staging %s failed: %w", commit, p, err)
		}
	}
	return commit, nil
}

func onBranch(files map[string][]byte, branch string) map[fileKey][]byte {
	out := make(map[fileKey][]byte, len(files))
	for p, c := range files {
		out[fileKey{branch, p}] = c
	}
	return out
}

// pullRequest pushes the change as a new branch and opens a pull request into its branch.
func (ws *workspace) pullRequest(ctx context.Context, req Request, res *Result) error {
	if ws.g == nil {
		return fmt.Errorf("--pr: %s is not a git repository", ws.location)
	}
	branches := ws.branchOrder()
	if len(branches) != 1 {
		return fmt.Errorf("--pr: the change touches branches %s; a pull request holds one: use --commit", strings.Join(branches, ", "))
	}
	if req.OpenPR == nil {
		return errors.New("--pr: no forge to open the pull request on")
	}
	base := branches[0]
	t, err := ws.prTarget(ctx, req, base)
	if err != nil {
		return err
	}
	defer t.cleanup()
	msg := message(req, res)
	author, committer := ws.signatures(req)
	commit, err := t.repo.WriteFilesOn(t.tip, ws.byBranch()[base], msg, author, committer)
	if err != nil {
		return err
	}
	if commit.IsZero() {
		res.NoChange = true
		return nil
	}
	head := "fleetform/authoring/" + time.Now().UTC().Format("20060102-150405") + "-" + commit.String()[:8]
	if err := t.repo.Publish(ctx, head, commit, plumbing.ZeroHash); err != nil {
		return fmt.Errorf("push %s: %w", head, err)
	}
	subject, _, _ := strings.Cut(msg, "\n")
	pr, err := req.OpenPR(ctx, t.remote, forge.NewChangeRequest{Base: base, Head: head, Title: subject,
		Body: markdown(res), Labels: []string{"fleetform"}})
	if err != nil {
		return fmt.Errorf("the branch %s is pushed, but: %w", head, err)
	}
	res.PullRequest, res.Written = pr, true
	res.Commits = append(res.Commits, CommitRef{Branch: head, Commit: commit.String()})
	return nil
}

// prTarget is where a pull request's branch is made and pushed from.
type prTarget struct {
	repo    *gitrepo.Repo
	remote  string        // the repository the pull request is opened on
	tip     plumbing.Hash // the commit of its base branch the change goes on top of
	cleanup func()
}

// prTarget is the mirror of a remote control plane, at the tip the change was made on;
// else a clone of req.Remote (default: the origin remote) in a temporary folder, at its
// tip of base.
func (ws *workspace) prTarget(ctx context.Context, req Request, base string) (prTarget, error) {
	if ws.mirror != nil {
		if _, err := ws.tree(base); err != nil {
			return prTarget{}, err
		}
		return prTarget{repo: ws.mirror, remote: ws.remote, tip: ws.tips[base], cleanup: func() {}}, nil
	}
	remote := req.Remote
	if remote == "" {
		r, err := ws.g.Remote("origin")
		if err != nil || len(r.Config().URLs) == 0 {
			return prTarget{}, fmt.Errorf("--pr: the control plane has no origin remote to push to")
		}
		remote = r.Config().URLs[0]
	}
	cache, err := os.MkdirTemp("", "fleetform-pr-*")
	if err != nil {
		return prTarget{}, err
	}
	t := prTarget{remote: remote, cleanup: func() { _ = os.RemoveAll(cache) }}
	if t.repo, err = gitrepo.Open(ctx, remote, cache, req.Credentials, req.Logger); err == nil {
		t.tip, err = t.repo.Tip(ctx, base)
	}
	if err == nil {
		err = ws.level(base, remote, t.tip)
	}
	if err != nil {
		t.cleanup()
		return prTarget{}, err
	}
	return t, nil
}

// level checks that the local branch base, which the change was made and checked on, is
// where the remote's is (remoteTip): the pull request's files are whole files made from
// the local branch, and on another tip they would undo what is only there, or carry what
// is only here.
func (ws *workspace) level(base, remote string, remoteTip plumbing.Hash) error {
	if _, err := ws.tree(base); err != nil {
		return err
	}
	if local := ws.tips[base]; local != remoteTip {
		return fmt.Errorf("--pr: the change was made on %s at %s, but %s has %s at %s: "+
			"bring them level (git pull, or push your commits) and run again", base, shortHash(local), repourl.Redact(remote), base, shortHash(remoteTip))
	}
	return nil
}

// shortHash is a commit's hash as git abbreviates it (none: "no commit").
func shortHash(h plumbing.Hash) string {
	if h.IsZero() {
		return "no commit"
	}
	return h.String()[:12]
}

// markdown is the body of a pull request: the operations and the fleet plan.
func markdown(res *Result) string {
	var b strings.Builder
	b.WriteString("Authored with fleetform:\n\n")
	for _, op := range res.Operations {
		fmt.Fprintf(&b, "- %s\n", op)
	}
	b.WriteString("\n### What it does to the fleet\n\n")
	for _, p := range res.Plan {
		fmt.Fprintf(&b, "- **%s**: %s\n", p.Environment, p.Summary())
	}
	return b.String()
}

// Summary is one line about an environment's plan.
func (p EnvironmentPlan) Summary() string {
	s := fmt.Sprintf("%d assignment(s) gained, %d lost, %d config value(s) changed",
		len(p.AssignmentsAdded), len(p.AssignmentsRemoved), len(p.ConfigChanged))
	if p.Note != "" {
		s += " (" + p.Note + ")"
	}
	return s
}
