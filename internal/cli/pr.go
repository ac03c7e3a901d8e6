package cli

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/fleetform/fleetform/internal/forge"
	"github.com/fleetform/fleetform/internal/forge/github"
	"github.com/fleetform/fleetform/internal/gitops"
	"github.com/fleetform/fleetform/internal/render"
)

// pullRequester opens apply's pull requests.
type pullRequester struct {
	e      *env
	env    string
	target gitops.Target
	repo   forge.Repo
	client forge.PullRequests
}

// newPullRequester checks that --pr can work: a repository URL on a forge and a token.
func newPullRequester(e *env, t gitops.Target, envName, forgeURL string) (*pullRequester, error) {
	host, repo, err := forge.ParseRepoURL(t.Repo)
	if err != nil {
		return nil, failed(ExitUsage, fmt.Errorf("--pr needs the GitOps repository's URL on a forge: %w", err))
	}
	token := os.Getenv("FLEETFORM_GITHUB_TOKEN")
	if token == "" {
		token = os.Getenv("GITHUB_TOKEN")
	}
	if token == "" {
		return nil, failed(ExitUsage, fmt.Errorf("--pr needs a token in FLEETFORM_GITHUB_TOKEN or GITHUB_TOKEN"))
	}
	var opts []github.Option
	switch {
	case forgeURL != "":
		opts = append(opts, github.WithBaseURL(forgeURL))
	case host != "github.com":
		opts = append(opts, github.WithBaseURL("https://"+host+"/api/v3/"))
	}
	client, err := github.New(token, opts...)
	if err != nil {
		return nil, failed(ExitUsage, err)
	}
	return &pullRequester{e: e, env: envName, target: t, repo: repo, client: client}, nil
}

// head names the new branch: fleetform/<env>/<UTC time>-<control-plane commit>.
func (p *pullRequester) head(controlPlaneCommit string) string {
	name := forge.BranchPrefix(p.env) + time.Now().UTC().Format("20060102-150405")
	if controlPlaneCommit != "" {
		name += "-" + controlPlaneCommit[:min(len(controlPlaneCommit), 8)]
	}
	return name
}

// open opens the pull request for an applied plan and closes fleetform's earlier ones for
// the environment (never anybody else's).
func (p *pullRequester) open(ctx context.Context, r *result, res *gitops.Result) (*pullRequestJSON, []int, error) {
	plan := toPlanJSON(res.Plan, r, false)
	var body bytes.Buffer
	if err := planText(&body, &plan, false); err != nil {
		return nil, nil, err
	}
	body.WriteString("\n" + forge.Marker(p.env) + "\n")
	labels := []string{"fleetform"}
	for _, c := range res.Plan.Changes {
		if c.Path == render.PromotedCommitFile {
			labels = append(labels, "promoted") // Kalypso's label for a promotion
		}
	}
	title := fmt.Sprintf("fleetform: apply %s", p.env)
	if c := r.snap.Revisions.Environment; c != "" {
		title += " from control plane " + c[:min(len(c), 12)]
	}
	pr, err := p.client.Create(ctx, p.repo, forge.NewChangeRequest{
		Base: p.target.Branch, Head: res.Branch, Title: title, Body: body.String(), Labels: labels,
	})
	if err != nil {
		return nil, nil, fmt.Errorf("open pull request: %w", err)
	}
	closed, err := forge.Supersede(ctx, p.client, p.repo, p.target.Branch, p.env, pr.Number, p.e.logger)
	if err != nil {
		p.e.logger.Warn("closing superseded pull requests", "error", strings.TrimSpace(err.Error()))
	}
	return &pullRequestJSON{Number: pr.Number, URL: pr.URL, Head: pr.Head, Base: pr.Base}, closed, nil
}
