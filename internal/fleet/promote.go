package fleet

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/fleetform/fleetform/api/v1alpha1"
	"github.com/fleetform/fleetform/internal/controlplane"
	"github.com/fleetform/fleetform/internal/forge"
	"github.com/fleetform/fleetform/internal/gitops"
	"github.com/fleetform/fleetform/internal/hub"
	"github.com/fleetform/fleetform/internal/hub/api"
	"github.com/fleetform/fleetform/internal/pipeline"
	"github.com/fleetform/fleetform/internal/promote"
)

// PromoteRequest is one promotion of a control-plane commit into an environment.
type PromoteRequest struct {
	To string
	// Commit is the control-plane commit (or ref) to promote ("": the source environment's
	// pin, or the tip for a first environment).
	Commit string
	// Override promotes despite unmet gates; Reason is required then, and recorded.
	Override bool
	Reason   string
	// Actor is who promotes (recorded).
	Actor string
	// By is who promotes and why the access policies allowed it, for the history (nil: not
	// known).
	By *hub.Actor
	// PullRequest pushes the pin to a new branch and opens a pull request.
	PullRequest bool
	// CommitStatus sets a commit status "<env> environment" on the promoted commit.
	CommitStatus bool
	Now          time.Time
}

// PromoteResult is what a promotion did: the contract of `promote -o json`.
type PromoteResult struct {
	promote.Result
	PullRequest *forge.PullRequest `json:"pullRequest,omitempty"`
}

// Promote checks the gates of req.To (its source pinned to the commit, applied, compliant on
// the hub for the soak time; the approval; the freeze windows) and writes the pin into the
// control plane, or proposes it as a pull request. A refusal changes nothing and is a
// RefusedError along with the result, which gives the reasons.
func (f *Fleet) Promote(ctx context.Context, req PromoteRequest) (*PromoteResult, error) {
	action := v1alpha1.ActionPromote
	if req.Override {
		action = v1alpha1.ActionOverride
	}
	if err := f.askHub(ctx, api.WhoAmIQuery{Action: action, Environments: []string{req.To}}); err != nil {
		return nil, err
	}
	p := f.promoter()
	if req.CommitStatus {
		statuses, err := f.commitStatuses(ctx)
		if err != nil {
			return nil, err
		}
		p.Statuses = statuses
	}
	cp, err := f.OpenControlPlane(ctx)
	if err != nil {
		return nil, err
	}
	var prs *pipeline.PullRequests
	if req.PullRequest {
		if prs, err = f.pinPullRequests(ctx, cp, req.To); err != nil {
			return nil, err
		}
		p.Commit.HeadBranch = prs.Head("promote")
	}
	res, err := p.Promote(ctx, promote.Request{ControlPlane: cp, To: req.To, Commit: req.Commit, Override: req.Override,
		Reason: req.Reason, Actor: req.Actor, By: req.By, Now: req.Now})
	if err != nil {
		return nil, err
	}
	doc := &PromoteResult{Result: res}
	if prs != nil && res.PinCommit != "" {
		if doc.PullRequest, err = openPinPullRequest(ctx, prs, p.Commit.HeadBranch, res, req.Reason); err != nil {
			return nil, err
		}
	}
	if !res.Promoted {
		return doc, &RefusedError{Reasons: res.Reasons}
	}
	return doc, nil
}

// Review checks every environment's gates now, in the chain's order, changing nothing.
func (f *Fleet) Review(ctx context.Context, now time.Time) ([]promote.Status, error) {
	cp, err := f.OpenControlPlane(ctx)
	if err != nil {
		return nil, err
	}
	return f.promoter().Review(ctx, cp, now)
}

// Watcher follows the promotion chain for actor: every environment with automatic promotion
// gets its source's pin as soon as the gates pass, and then apply (nil: promote only) is
// called for it. now is the clock (nil: time.Now).
func (f *Fleet) Watcher(actor string, now func() time.Time, apply func(ctx context.Context, cp *controlplane.ControlPlane, env string) error) *promote.Watcher {
	return &promote.Watcher{Promoter: f.promoter(), Actor: actor, Logger: f.cfg.Logger, Now: now, Open: f.OpenControlPlane, Apply: apply}
}

// Watch follows the promotion chain every interval until ctx ends (Watcher), applying each
// environment it promotes into when apply is set (ApplyEnvironment).
func (f *Fleet) Watch(ctx context.Context, actor string, interval time.Duration, apply bool) error {
	var after func(ctx context.Context, cp *controlplane.ControlPlane, env string) error
	if apply {
		after = f.applyPromoted
	}
	if err := f.Watcher(actor, nil, after).Run(ctx, interval); err != nil && ctx.Err() == nil {
		return err
	}
	return nil // interrupted: the normal way to stop watching
}

// applyPromoted applies an environment a promotion moved: errors in its input are in the
// apply's record, not a failure of the promotion.
func (f *Fleet) applyPromoted(ctx context.Context, cp *controlplane.ControlPlane, env string) error {
	_, err := f.ApplyEnvironment(ctx, cp, env)
	if IsInvalid(err) {
		return nil
	}
	return err
}

// promoter promotes through the gates, recording in the Fleet's hub, with the pin commits
// signed by its author.
func (f *Fleet) promoter() *promote.Promoter {
	p := &promote.Promoter{Git: f.writer(WriteOptions{}), Logger: f.cfg.Logger, Commit: f.commitOptions("", 0)}
	if f.cfg.Hub != nil {
		p.Hub = f.cfg.Hub
	}
	return p
}

// commitStatuses sets the commit statuses of the promotions on the control plane's forge.
func (f *Fleet) commitStatuses(ctx context.Context) (promote.StatusReporter, error) {
	repo, client, err := pipeline.ForgeClient(ctx, f.cfg.Credentials, f.cfg.ControlPlane, f.cfg.ForgeURL)
	if err != nil {
		return nil, Usage(fmt.Errorf("--commit-status needs the control plane's URL on a forge and a token: %w", err))
	}
	return statusReporter{repo: repo, client: client}, nil
}

// statusReporter binds commit statuses to the control-plane repository.
type statusReporter struct {
	repo   forge.Repo
	client forge.CommitStatuses
}

func (s statusReporter) SetStatus(ctx context.Context, commit string, st forge.CommitStatus) error {
	return s.client.SetStatus(ctx, s.repo, commit, st)
}

// pinPullRequests opens the pull request of a pin into the branch the pin is written on.
func (f *Fleet) pinPullRequests(ctx context.Context, cp *controlplane.ControlPlane, to string) (*pipeline.PullRequests, error) {
	envs, _, err := cp.Environments(ctx)
	if err != nil {
		return nil, err
	}
	for _, info := range envs {
		if info.Name != to {
			continue
		}
		loc, err := cp.PinLocation(info)
		if err != nil {
			return nil, err
		}
		prs, err := pipeline.NewPullRequests(ctx, f.cfg.Credentials, gitops.Target{Repo: f.cfg.ControlPlane, Branch: loc.Branch}, to, f.cfg.ForgeURL, f.cfg.Logger)
		if err != nil {
			return nil, Usage(fmt.Errorf("--pr needs the repository's URL on a forge and a token: %w", err))
		}
		return prs, nil
	}
	return nil, Usagef("environment %q is not declared", to)
}

// openPinPullRequest opens the pull request of a pin written on head.
func openPinPullRequest(ctx context.Context, prs *pipeline.PullRequests, head string, res promote.Result, reason string) (*forge.PullRequest, error) {
	title := fmt.Sprintf("fleetform: promote %s to %s", res.Commit[:min(len(res.Commit), 12)], res.To)
	var body strings.Builder
	fmt.Fprintf(&body, "Pins the common content of `%s` to control-plane commit `%s`", res.To, res.Commit)
	if res.From != "" {
		fmt.Fprintf(&body, ", verified in `%s`", res.From)
	}
	body.WriteString(".\n")
	if len(res.Overridden) > 0 {
		fmt.Fprintf(&body, "\n**Overridden gates** (%s):\n", reason)
		for _, r := range res.Overridden {
			fmt.Fprintf(&body, "- %s\n", r)
		}
	}
	body.WriteString("\n" + forge.Marker(res.To) + "\n")
	doc, _, err := prs.Create(ctx, forge.NewChangeRequest{Base: prs.Base(), Head: head, Title: title,
		Body: body.String(), Labels: []string{"fleetform", "promotion"}})
	return doc, err
}
