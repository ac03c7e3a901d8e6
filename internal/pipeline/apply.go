package pipeline

import (
	"context"
	"errors"

	"github.com/fleetform/fleetform/internal/controlplane"
	"github.com/fleetform/fleetform/internal/forge"
	"github.com/fleetform/fleetform/internal/gitops"
)

// ApplyOptions say where and how an environment is applied.
type ApplyOptions struct {
	Target gitops.Target
	Commit gitops.CommitOptions
	// PullRequests, when set, pushes to a new branch and opens a pull request instead of
	// moving the target branch.
	PullRequests *PullRequests
	// Hub, when set, receives the desired state after a direct apply.
	Hub DesiredPoster
}

// Applied is what an apply did, as the GitOps writer and the forge say it.
type Applied struct {
	// Result is the writer's result; nil when nothing could be planned.
	Result      *gitops.Result
	PullRequest *forge.PullRequest
	// Superseded are fleetform's earlier pull requests for the environment it closed.
	Superseded []int
	// HubErr is the hub's refusal of the desired state: the commit is written regardless.
	HubErr error
	// Report describes the plan written, or refused by a safety rule (the pull request's
	// body); Diagnostics are every stage's, the render's included. Both are set when Result
	// has such a plan.
	Report      PlanReport
	Diagnostics []controlplane.Diagnostic
}

// Input is what the GitOps writer is given for a run and a target.
func Input(r *Run, t gitops.Target) gitops.Input {
	return gitops.Input{Snapshot: r.Snapshot, Schedule: r.Schedule, Target: t}
}

// Write writes the run's environment to its GitOps repository as one commit (only what
// changed; nothing changed, no commit), opens a pull request instead when asked, and posts
// the desired state to the hub after a direct apply. A refusal by a safety rule
// (gitops.ErrRefused) comes with the result that explains it.
func Write(ctx context.Context, w *gitops.Writer, r *Run, o ApplyOptions) (*Applied, error) {
	co := o.Commit
	if o.PullRequests != nil {
		co.HeadBranch = o.PullRequests.Head(r.Snapshot.Revisions.Environment)
	}
	res, err := w.Apply(ctx, Input(r, o.Target), co)
	a := &Applied{Result: res}
	if res != nil && res.Plan != nil && (err == nil || errors.Is(err, gitops.ErrRefused)) {
		a.Diagnostics = r.DiagnosticsWith(res.Plan.Output)
		a.Report = Report(res.Plan, r, false)
	}
	if err != nil {
		return a, err
	}
	switch {
	case o.PullRequests == nil && o.Hub != nil:
		a.HubErr = PostDesired(ctx, o.Hub, r, res)
	case o.PullRequests != nil && !res.Commit.IsZero():
		a.PullRequest, a.Superseded, err = o.PullRequests.OpenApply(ctx, r, res, &a.Report)
		return a, err
	}
	return a, nil
}
