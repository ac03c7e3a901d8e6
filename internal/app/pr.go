package app

import (
	"context"
	"fmt"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/fleetform/fleetform/internal/forge"
	"github.com/fleetform/fleetform/internal/gitops/gitrepo"
)

// PullRequests opens the pull requests of `app apply --pr`: one head branch per workload,
// environment and source commit (Kalypso's deploy/<commit>/<env> pattern, under fleetform's
// prefix), so that re-running updates the open pull request instead of opening another.
type PullRequests struct {
	Forge forge.PullRequests
	Repo  forge.Repo
}

// Scope is what fleetform's app pull requests are owned by: forge.BranchPrefix and
// forge.Marker of "<env>/app/<workload>" (never the platform's, "<env>").
func Scope(env, workload string) string { return env + "/app/" + workload }

// HeadBranch is the head branch of a run's pull request into base.
func HeadBranch(r *Run, base string) string {
	ref := r.In.App.Commit
	if ref == "" {
		ref = r.In.Version
	}
	if ref == "" {
		ref = "local"
	}
	ref = ref[:min(len(ref), 12)]
	return forge.BranchPrefix(Scope(r.Env, r.In.App.Workload.Metadata.Name)) + fileSafe(strings.ToLower(ref)) + "/" + base
}

// publish commits the edited tree on the head branch (on top of its tip when it exists, so
// that the push is a fast-forward) and opens the pull request, or finds the open one.
func (p *PullRequests) publish(ctx context.Context, w *Writer, r *Run, br *BranchResult, tree *gitrepo.Tree, baseTip plumbing.Hash, msg string) error {
	head := HeadBranch(r, br.Branch)
	br.Head = head
	headTip, err := w.Repo.Tip(ctx, head)
	if err != nil {
		return err
	}
	parent := baseTip
	if !headTip.IsZero() {
		if err := w.ownTip(head, headTip); err != nil {
			return err
		}
		parent = headTip
		same, err := sameTree(w.Repo, tree, headTip)
		if err != nil {
			return err
		}
		if same {
			parent = plumbing.ZeroHash // the head branch already has these files
		}
	}
	if !parent.IsZero() || headTip.IsZero() {
		sig := w.Author
		sig.When = now()
		commit, err := tree.Commit(parent, msg, sig)
		if err != nil {
			return err
		}
		if err := w.Repo.Publish(ctx, head, commit, headTip); err != nil {
			return err
		}
		br.Commit = commit.String()
	}
	pr, err := p.open(ctx, r, br.Branch, head, msg)
	if err != nil {
		return err
	}
	br.PullRequest = pr
	return nil
}

// ownTip refuses to go on from the tip of a pull request's head branch that fleetform did
// not commit (a reviewer's fix-up): the next commit holds the whole rendered tree, which
// would undo it.
func (w *Writer) ownTip(head string, tip plumbing.Hash) error {
	by, err := w.Repo.Committer(tip)
	if err != nil {
		return err
	}
	if by.Name != w.Author.Name || by.Email != w.Author.Email {
		return fmt.Errorf("the pull request's branch %s has a commit by %s <%s> (%s) that fleetform did not make, and the next commit "+
			"would undo it: make that change in the application's source or config repository instead, then close the pull request "+
			"or delete its branch, and run again", head, by.Name, by.Email, tip.String()[:12])
	}
	return nil
}

// sameTree reports whether the edited tree is the tree of commit.
func sameTree(repo *gitrepo.Repo, tree *gitrepo.Tree, commit plumbing.Hash) (bool, error) {
	other, err := repo.Edit(commit)
	if err != nil {
		return false, err
	}
	a, err := tree.WriteDir("")
	if err != nil {
		return false, err
	}
	b, err := other.WriteDir("")
	return a == b, err
}

// open finds fleetform's open pull request from head into base, or opens one and closes
// fleetform's earlier ones for the workload and environment (never anybody else's).
func (p *PullRequests) open(ctx context.Context, r *Run, base, head, msg string) (*PullRequest, error) {
	scope := Scope(r.Env, r.In.App.Workload.Metadata.Name)
	open, err := p.Forge.ListOpen(ctx, p.Repo, base)
	if err != nil {
		return nil, fmt.Errorf("list pull requests: %w", err)
	}
	for _, pr := range open {
		if pr.Head == head && forge.Owned(pr, scope) {
			return &PullRequest{PullRequest: pr, Updated: true}, nil
		}
	}
	version := r.In.Version
	if version == "" {
		version = r.In.App.Commit
	}
	subject, body, _ := strings.Cut(msg, "\n")
	req := forge.NewChangeRequest{Base: base, Head: head, Title: fmt.Sprintf("Deploy to '%s' '%s'", r.Env, version),
		Body:   subject + "\n" + body + "\n" + forge.Marker(scope) + "\n",
		Labels: []string{"fleetform"}}
	created, closed, err := forge.OpenPullRequest(ctx, p.Forge, p.Repo, scope, req, nil)
	if created.Number == 0 {
		return nil, err
	}
	return &PullRequest{PullRequest: created, Superseded: closed}, err
}
