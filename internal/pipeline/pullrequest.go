package pipeline

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/fleetform/fleetform/internal/forge"
	"github.com/fleetform/fleetform/internal/forge/github"
	"github.com/fleetform/fleetform/internal/gitauth"
	"github.com/fleetform/fleetform/internal/gitops"
	"github.com/fleetform/fleetform/internal/render"
)

// PullRequests opens fleetform's pull requests for one environment into one base branch,
// and closes fleetform's earlier ones there (never anybody else's).
type PullRequests struct {
	env    string
	base   string
	repo   forge.Repo
	client *github.Client
	logger *slog.Logger
}

// NewPullRequests checks that pull requests can be opened on t: a repository URL on a forge
// and a token the credentials allow for its API (forgeURL, or the host's own).
func NewPullRequests(ctx context.Context, creds *gitauth.Store, t gitops.Target, env, forgeURL string, logger *slog.Logger) (*PullRequests, error) {
	repo, client, err := ForgeClient(ctx, creds, t.Repo, forgeURL)
	if err != nil {
		return nil, err
	}
	return &PullRequests{env: env, base: t.Branch, repo: repo, client: client, logger: logger}, nil
}

// ForgeClient returns the forge repository of a URL and a client for the forge's API:
// forgeURL, or the API of the repository's host (api.github.com for github.com,
// https://HOST/api/v3/ otherwise). Its token is the one creds allow for that API
// (gitauth.Store.ForgeToken): never one for another host, never over plain http unless a
// credentials entry allows it.
func ForgeClient(ctx context.Context, creds *gitauth.Store, repoURL, forgeURL string) (forge.Repo, *github.Client, error) {
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

// Base is the branch the pull requests go into.
func (p *PullRequests) Base() string { return p.base }

// Head names a new branch: fleetform/<env>/<UTC time>-<what, cut to 8 characters>.
func (p *PullRequests) Head(what string) string {
	name := forge.BranchPrefix(p.env) + time.Now().UTC().Format("20060102-150405")
	if what != "" {
		name += "-" + what[:min(len(what), 8)]
	}
	return name
}

// OpenApply opens the pull request of an applied plan, with its report's Markdown as the body.
func (p *PullRequests) OpenApply(ctx context.Context, r *Run, res *gitops.Result, plan *PlanReport) (*forge.PullRequest, []int, error) {
	var body bytes.Buffer
	if err := WriteMarkdown(&body, plan, false); err != nil {
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
	return p.Create(ctx, forge.NewChangeRequest{Base: p.base, Head: res.Branch, Title: title, Body: body.String(), Labels: labels})
}

// Create opens a pull request (forge.Open) and closes fleetform's earlier ones for the
// environment into the same base (never anybody else's; a failure to close one is logged).
func (p *PullRequests) Create(ctx context.Context, req forge.NewChangeRequest) (*forge.PullRequest, []int, error) {
	pr, closed, err := forge.OpenPullRequest(ctx, p.client, p.repo, p.env, req, p.logger)
	if pr.Number == 0 {
		return nil, nil, err
	}
	if err != nil {
		p.logger.WarnContext(ctx, "closing superseded pull requests", "error", strings.TrimSpace(err.Error()))
	}
	return &forge.PullRequest{Number: pr.Number, URL: pr.URL, Head: pr.Head, Base: pr.Base}, closed, nil
}
