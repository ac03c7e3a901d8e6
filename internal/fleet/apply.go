package fleet

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"

	"github.com/fleetform/fleetform/internal/controlplane"
	"github.com/fleetform/fleetform/internal/forge"
	"github.com/fleetform/fleetform/internal/gitops"
	"github.com/fleetform/fleetform/internal/pipeline"
)

// ApplyRequest is an apply of one environment.
type ApplyRequest struct {
	// Env is the environment ("": the only one there is).
	Env string
	// GitOps, Branch and Path override where the environment is written (Fleet.Target).
	GitOps, Branch, Path string
	Write                WriteOptions
	// Subject replaces the first line of the commit message ("": generated).
	Subject string
	// MaxAttempts bounds how many times the branch is re-read and the plan made again when
	// someone else wrote in between (0: gitops.DefaultMaxAttempts).
	MaxAttempts int
	// PullRequest pushes to a new branch and opens a pull request instead of moving the
	// branch.
	PullRequest bool
	// Remember answers "no change" from the record of the environment's last clean apply
	// while nothing it read moved, without loading anything, and records this apply for the
	// next one; not with PullRequest or a Hub.
	Remember bool
}

// ApplyResult is what an apply did: the contract of `apply -o json`.
type ApplyResult struct {
	Environment string `json:"environment"`
	Commit      string `json:"commit"`
	Branch      string `json:"branch"`
	Attempts    int    `json:"attempts"`
	NoChange    bool   `json:"noChange"`
	Refused     string `json:"refused,omitempty"`
	// PullRequest is set with ApplyRequest.PullRequest; Superseded lists fleetform's earlier
	// pull requests it closed.
	PullRequest *forge.PullRequest  `json:"pullRequest,omitempty"`
	Superseded  []int               `json:"superseded,omitempty"`
	Plan        pipeline.PlanReport `json:"plan"`
	// Diagnostics are every problem met on the way, in the order met.
	Diagnostics []controlplane.Diagnostic `json:"-"`
}

// Apply writes env (or the only environment) to its GitOps repository as one commit: only
// what changed is rendered and written; nothing changed, no commit. A refusal by a safety
// rule (a mass deletion) is a RefusedError, errors in the input an InvalidError, a hub that
// refuses the desired state after the commit is written an error: each along with the
// ApplyResult, which says the rest.
func (f *Fleet) Apply(ctx context.Context, req ApplyRequest) (*ApplyResult, error) {
	cp, err := f.OpenControlPlane(ctx)
	if err != nil {
		return nil, err
	}
	memos, key := f.memos(req)
	if memos != nil {
		if noop, ok := memos.Unchanged(ctx, key, cp, f.writer(WriteOptions{})); ok {
			return &ApplyResult{Environment: noop.Environment, Attempts: 1, NoChange: true, Plan: *noop}, nil
		}
	}
	r, err := pipeline.Scheduled(ctx, cp, req.Env)
	if err != nil {
		return nil, environmentChoice(err)
	}
	t, err := f.Target(r, gitops.Target{Repo: req.GitOps, Branch: req.Branch, Path: req.Path})
	if err != nil {
		return nil, err
	}
	res, applied, err := f.applyRun(ctx, r, t, req)
	if memos != nil && res != nil && !IsRefused(err) {
		memos.Remember(key, r, applied, res.Plan) // a clean apply is remembered, any other forgets
	}
	return res, err
}

// ApplyRun applies a run already loaded to t (Apply, without the record of the last apply).
func (f *Fleet) ApplyRun(ctx context.Context, r *pipeline.Run, t gitops.Target, req ApplyRequest) (*ApplyResult, error) {
	res, _, err := f.applyRun(ctx, r, t, req)
	return res, err
}

// ApplyEnvironment loads env from cp and applies it to where it is written (after a
// promotion moved its pin).
func (f *Fleet) ApplyEnvironment(ctx context.Context, cp *controlplane.ControlPlane, env string) (*ApplyResult, error) {
	r, err := pipeline.Scheduled(ctx, cp, env)
	if err != nil {
		return nil, err
	}
	t, err := f.Target(r, gitops.Target{})
	if err != nil {
		return nil, err
	}
	res, err := f.ApplyRun(ctx, r, t, ApplyRequest{})
	if res != nil {
		f.cfg.Logger.InfoContext(ctx, "applied", "environment", env, "commit", res.Commit, "no_change", res.NoChange)
	}
	return res, err
}

// applyRun applies r to t and says what it did, with the outcome (see Apply).
func (f *Fleet) applyRun(ctx context.Context, r *pipeline.Run, t gitops.Target, req ApplyRequest) (*ApplyResult, *pipeline.Applied, error) {
	opts := pipeline.ApplyOptions{Target: t, Commit: f.commitOptions(req.Subject, req.MaxAttempts), Hub: f.cfg.Hub}
	if req.PullRequest {
		prs, err := pipeline.NewPullRequests(ctx, f.cfg.Credentials, t, r.Snapshot.Environment, f.cfg.ForgeURL, f.cfg.Logger)
		if err != nil {
			return nil, nil, Usage(fmt.Errorf("--pr needs the repository's URL on a forge and a token: %w", err))
		}
		opts.PullRequests = prs
	}
	applied, err := pipeline.Write(ctx, f.writer(req.Write), r, opts)
	if applied.Result == nil || applied.Result.Plan == nil || (err != nil && !errors.Is(err, gitops.ErrRefused)) {
		return nil, applied, err
	}
	res := applied.Result
	doc := &ApplyResult{Environment: res.Plan.Environment, Branch: res.Branch, Attempts: res.Attempts, NoChange: res.Plan.NoChange(),
		PullRequest: applied.PullRequest, Superseded: applied.Superseded, Plan: applied.Report, Diagnostics: applied.Diagnostics}
	if !res.Commit.IsZero() {
		doc.Commit = res.Commit.String()
	}
	switch {
	case err != nil:
		doc.Refused = err.Error()
		return doc, applied, &RefusedError{Err: err}
	case len(doc.Plan.Errors) > 0 || len(doc.Plan.Failed) > 0:
		if applied.HubErr != nil {
			f.cfg.Logger.WarnContext(ctx, "the hub refused the desired state", "environment", doc.Environment, "error", applied.HubErr.Error())
		}
		return doc, applied, &InvalidError{Errors: max(len(doc.Plan.Errors), len(doc.Plan.Failed))}
	case applied.HubErr != nil:
		return doc, applied, fmt.Errorf("the commit is written, but: %w", applied.HubErr)
	}
	return doc, applied, nil
}

// memos returns where the record of the last apply is kept and the record's key; nil when
// this apply may not be answered from it.
func (f *Fleet) memos(req ApplyRequest) (*pipeline.Memos, string) {
	dir := f.cacheDir()
	if !req.Remember || req.PullRequest || f.cfg.Hub != nil || dir == "" {
		return nil, ""
	}
	wd, _ := os.Getwd() // relative locations are read from there ("" is a key part too)
	read := f.cfg.Read
	parts := []string{"apply", wd, f.cfg.ControlPlane, req.Env, read.Ref, read.CommonRef, string(read.Layout),
		req.GitOps, req.Branch, req.Path, strconv.FormatFloat(req.Write.MassDeleteThreshold, 'g', -1, 64)}
	for _, k := range slices.Sorted(maps.Keys(read.RepoMap)) {
		parts = append(parts, "repo-map "+k+"="+read.RepoMap[k])
	}
	for _, k := range slices.Sorted(maps.Keys(read.GitOps)) {
		parts = append(parts, "gitops "+k+"="+read.GitOps[k])
	}
	return pipeline.NewMemos(filepath.Join(dir, "unchanged"), f.cfg.Logger), pipeline.MemoKey(parts...)
}
