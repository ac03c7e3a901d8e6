package fleet

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/fleetform/fleetform/api/v1alpha1"
	"github.com/fleetform/fleetform/internal/app"
	"github.com/fleetform/fleetform/internal/hub"
	"github.com/fleetform/fleetform/internal/hub/api"
	"github.com/fleetform/fleetform/internal/promote"
)

// AppPromotion is what an app promotion did: the contract of `app promote -o json`.
type AppPromotion struct {
	Promoted bool          `json:"promoted"`
	Workload string        `json:"workload"`
	From     string        `json:"from"`
	To       string        `json:"to"`
	Commit   string        `json:"commit"`
	Version  string        `json:"version,omitempty"`
	ImageTag string        `json:"imageTag,omitempty"`
	Reasons  []string      `json:"reasons"`
	Apply    *app.Result   `json:"apply,omitempty"`
	Gates    promote.Gates `json:"gates"`
}

// AppPromote deploys the source commit and version the targets of from run to the next
// environment, to, when the gates of fleetform-app.yaml's promotion.<to> pass on the hub:
// it renders that commit with that version for to and applies it (AppApply, req.Env and the
// versions aside). The decision is recorded in the hub's history. A refusal is a
// RefusedError along with the result, which gives the reasons.
func (f *Fleet) AppPromote(ctx context.Context, req AppRequest, from, to string) (*AppPromotion, error) {
	if f.cfg.Hub == nil {
		return nil, Usage(errors.New("--hub is required: the gates are checked on the hub"))
	}
	repos := f.appRepos()
	tip, err := appSource(ctx, repos, req, "")
	if err != nil {
		return nil, err
	}
	doc := &AppPromotion{Workload: tip.Workload.Metadata.Name, From: from, To: to, Reasons: []string{}}
	if err := f.askHub(ctx, api.WhoAmIQuery{Action: v1alpha1.ActionPromote, Environments: []string{to}, Workloads: []string{doc.Workload}}); err != nil {
		return nil, err
	}
	if doc.Gates, err = tip.Gates(from, to); err != nil {
		return nil, err
	}
	deployed, err := f.deployed(ctx, tip, req, from)
	if err != nil {
		return nil, err
	}
	doc.Commit, doc.Version, doc.ImageTag = deployed.Commit, deployed.Version, deployed.ImageTag
	reasons, err := app.CheckPromotion(ctx, f.cfg.Hub, doc.Gates, doc.Workload, deployed, time.Now())
	if err != nil {
		return nil, err
	}
	if len(reasons) > 0 {
		doc.Reasons = reasons
		f.recordAppPromotion(ctx, req, doc, "refused: "+strings.Join(reasons, "; "))
		return doc, &RefusedError{Reasons: reasons}
	}
	a, err := appSource(ctx, repos, req, deployed.Commit)
	if err != nil {
		return nil, err
	}
	r, err := f.appCompose(ctx, repos, a, req, to, deployed.Version, deployed.ImageTag)
	if err != nil {
		return nil, err
	}
	res, err := f.writeApp(ctx, r, req, false)
	if err != nil {
		return nil, err
	}
	doc.Apply, doc.Promoted = res, !res.Failed()
	if !doc.Promoted {
		f.recordAppPromotion(ctx, req, doc, "failed: the deployment targets of "+to+" could not all be rendered")
		return doc, appFailed(res)
	}
	if err := f.postVersions(ctx, r, res); err != nil {
		return nil, err
	}
	f.recordAppPromotion(ctx, req, doc, fmt.Sprintf("promoted %s %s (commit %s) from %s to %s", doc.Workload,
		doc.Promotes(), doc.ShortCommit(), from, to))
	return doc, nil
}

// deployed reads what the targets of env run, from the app GitOps repository.
func (f *Fleet) deployed(ctx context.Context, a *app.App, req AppRequest, env string) (app.Deployed, error) {
	targets := a.Targets(env)
	if len(targets) == 0 {
		return app.Deployed{}, fmt.Errorf("%s: workload %s has no deployment target in %s", a.Workload.Source.File, a.Workload.Metadata.Name, env)
	}
	r := &app.Run{Env: env}
	for _, t := range targets {
		r.Targets = append(r.Targets, &app.TargetRun{Target: t})
	}
	repo, err := f.appGitOps(ctx, r, req.GitOps)
	if err != nil {
		return app.Deployed{}, err
	}
	return app.ReadDeployed(ctx, repo, env, targets)
}

// recordAppPromotion appends the decision to the hub's history (a failure to record is a
// warning).
func (f *Fleet) recordAppPromotion(ctx context.Context, req AppRequest, doc *AppPromotion, msg string) {
	ev := hub.Event{Time: time.Now().UTC(), Kind: hub.EventPromotion, Environment: doc.To, Workload: doc.Workload,
		Revision: doc.Commit, From: doc.From, To: doc.To, Message: msg, Actor: req.By}
	if err := f.cfg.Hub.Record(ctx, ev); err != nil {
		f.cfg.Logger.WarnContext(ctx, "recording the promotion in the hub", "error", err.Error())
	}
}

// Promotes names what is promoted: the version, else the short commit.
func (p *AppPromotion) Promotes() string {
	if p.Version != "" {
		return p.Version
	}
	return p.ShortCommit()
}

// ShortCommit is the source commit promoted, cut to 7 characters.
func (p *AppPromotion) ShortCommit() string { return p.Commit[:min(len(p.Commit), 7)] }
