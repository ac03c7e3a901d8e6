package cli

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/fleetform/fleetform/internal/forge"
	"github.com/fleetform/fleetform/internal/forge/github"
	"github.com/fleetform/fleetform/internal/gitauth"
	"github.com/fleetform/fleetform/internal/gitops"
	"github.com/fleetform/fleetform/internal/pipeline"
	"github.com/fleetform/fleetform/internal/render"
)

// pullRequester opens fleetform's pull requests into base.
type pullRequester struct {
	e      *env
	env    string
	base   string
	repo   forge.Repo
	client *github.Client
}

// newPullRequester checks that --pr can work: a repository URL on a forge and a token.
func newPullRequester(ctx context.Context, e *env, creds *gitauth.Store, t gitops.Target, envName, forgeURL string) (*pullRequester, error) {
	repo, client, err := forgeClient(ctx, creds, t.Repo, forgeURL)
	if err != nil {
		return nil, failed(ExitUsage, fmt.Errorf("--pr needs the repository's URL on a forge and a token: %w", err))
	}
	return &pullRequester{e: e, env: envName, base: t.Branch, repo: repo, client: client}, nil
}

// forgeClient returns the forge repository of a URL and a client for the forge's API:
// forgeURL, or the API of the repository's host (api.github.com for github.com,
// https://HOST/api/v3/ otherwise). Its token is the one creds allow for that API
// (gitauth.Store.ForgeToken): never one for another host, never over plain http unless a
// credentials entry allows it.
func forgeClient(ctx context.Context, creds *gitauth.Store, repoURL, forgeURL string) (forge.Repo, *github.Client, error) {
	host, repo, err := forge.ParseRepoURL(repoURL)
	if err != nil {
		return repo, nil, err
	}
	api := forgeURL
	switch {
	case api != "":
	case strings.EqualFold(host, "github.com"):
		api = "https://api.github.com/"
	default:
		api = "https://" + host + "/api/v3/"
	}
	cred, err := creds.ForgeToken(ctx, api, repoURL)
	if err != nil {
		return repo, nil, err
	}
	var opts []github.Option
	if api != "https://api.github.com/" {
		opts = append(opts, github.WithBaseURL(api))
	}
	client, err := github.New(cred.Password, opts...)
	return repo, client, err
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
func (p *pullRequester) open(ctx context.Context, r *pipeline.Run, res *gitops.Result) (*pullRequestJSON, []int, error) {
	plan := pipeline.Report(res.Plan, r, false)
	var body bytes.Buffer
	if err := pipeline.WriteMarkdown(&body, &plan, false); err != nil {
		return nil, nil, err
	}
	body.WriteString("\n" + forge.Marker(p.env) + "\n")
	labels := []string{"fleetform"}
	for _, c := range res.Plan.Changes {
		if c.Path == render.PromotedCommitFile && c.Action != "delete" {
			labels = append(labels, "promoted") // Kalypso's label for a promotion
		}
	}
	title := fmt.Sprintf("fleetform: apply %s", p.env)
	if c := r.Snapshot.Revisions.Environment; c != "" {
		title += " from control plane " + c[:min(len(c), 12)]
	}
	return p.create(ctx, forge.NewChangeRequest{Base: p.base, Head: res.Branch, Title: title, Body: body.String(), Labels: labels})
}

// create opens a pull request and closes fleetform's earlier ones for the environment into
// the same base (never anybody else's).
func (p *pullRequester) create(ctx context.Context, req forge.NewChangeRequest) (*pullRequestJSON, []int, error) {
	pr, err := p.client.Create(ctx, p.repo, req)
	if err != nil {
		return nil, nil, fmt.Errorf("open pull request: %w", err)
	}
	closed, err := forge.Supersede(ctx, p.client, p.repo, p.base, p.env, pr.Number, p.e.logger)
	if err != nil {
		p.e.logger.Warn("closing superseded pull requests", "error", strings.TrimSpace(err.Error()))
	}
	return &pullRequestJSON{Number: pr.Number, URL: pr.URL, Head: pr.Head, Base: pr.Base}, closed, nil
}
