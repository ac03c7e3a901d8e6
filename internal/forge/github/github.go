// Package github implements forge.PullRequests on the GitHub REST API (github.com and GitHub
// Enterprise Server) with go-github. It is the only package that imports go-github.
//
// Errors never carry the token: GitHub's error responses are turned into plain errors (or
// forge.ErrPullRequestExists, forge.ErrUnauthorized, *forge.RateLimitError) that do not hold the
// HTTP request, and any text that would contain the token has it replaced by REDACTED.
package github

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	gh "github.com/google/go-github/v92/github"

	"github.com/fleetform/fleetform/internal/forge"
)

const (
	// perPage is the page size for lists: GitHub's maximum.
	perPage = 100
	// maxPages bounds a list (100,000 pull requests) against a server that never stops paging.
	maxPages = 1000
	// defaultTimeout bounds each request when no HTTP client is given.
	defaultTimeout = 30 * time.Second
	// maxBodyBytes bounds every response body read (a page of 100 pull requests is ~3 MB).
	maxBodyBytes = 32 << 20
	// userAgent is sent with every request, as GitHub asks.
	userAgent = "fleetform"
)

// Client implements forge.PullRequests on the GitHub REST API. It is safe for concurrent use.
type Client struct {
	api   *gh.Client
	token string
}

var (
	_ forge.PullRequests   = (*Client)(nil)
	_ forge.CommitStatuses = (*Client)(nil)
)

// maxDescription is how much of a status description GitHub keeps.
const maxDescription = 140

// Option configures a Client.
type Option func(*settings)

type settings struct {
	baseURL    string
	httpClient *http.Client
}

// WithBaseURL points the client at GitHub Enterprise Server (e.g. https://ghe.example.com/api/v3/);
// "/api/v3/" is appended when the URL has no such path (go-github's WithEnterpriseURLs rule). Tests
// use it to point the client at an httptest server. Default: https://api.github.com/.
func WithBaseURL(u string) Option { return func(s *settings) { s.baseURL = u } }

// WithHTTPClient makes the client send its requests with a copy of c (its transport, timeout,
// proxy). Default: an http.Client with a 30 s timeout. Either way a redirect to another scheme,
// host or port is refused.
func WithHTTPClient(c *http.Client) Option { return func(s *settings) { s.httpClient = c } }

// sameOrigin refuses a redirect that leaves the scheme, host and port of the first request:
// the token must not follow it (net/http would send it to another port or over http on the
// same host). next, when set, then decides as usual.
func sameOrigin(next func(*http.Request, []*http.Request) error) func(*http.Request, []*http.Request) error {
	return func(req *http.Request, via []*http.Request) error {
		first := via[0].URL
		if !strings.EqualFold(req.URL.Scheme, first.Scheme) || !strings.EqualFold(req.URL.Host, first.Host) {
			return fmt.Errorf("github: refusing a redirect from %s://%s to %s://%s (the token stays with the API's host)",
				first.Scheme, first.Host, req.URL.Scheme, req.URL.Host)
		}
		if next != nil {
			return next(req, via)
		}
		if len(via) >= 10 {
			return errors.New("github: stopped after 10 redirects")
		}
		return nil
	}
}

// New returns a Client that authenticates with token (a personal access token, a fine-grained
// token or a GitHub App installation token, sent as "Authorization: Bearer"). The token needs
// read and write access to pull requests and contents of the repository.
func New(token string, opts ...Option) (*Client, error) {
	if token == "" {
		return nil, errors.New("github: a token is required")
	}
	var s settings
	for _, opt := range opts {
		opt(&s)
	}
	hc := &http.Client{Timeout: defaultTimeout}
	if s.httpClient != nil {
		copied := *s.httpClient
		hc = &copied
	}
	hc.Transport = limitBody{next: hc.Transport, limit: maxBodyBytes}
	hc.CheckRedirect = sameOrigin(hc.CheckRedirect)
	ghOpts := []gh.ClientOptionsFunc{
		gh.WithHTTPClient(hc),
		gh.WithAuthToken(token),
		gh.WithUserAgent(userAgent),
	}
	if s.baseURL != "" {
		// fleetform uploads nothing: the upload URL only has to be valid.
		ghOpts = append(ghOpts, gh.WithEnterpriseURLs(s.baseURL, s.baseURL))
	}
	api, err := gh.NewClient(ghOpts...)
	if err != nil {
		return nil, fmt.Errorf("github: %s", redact(err.Error(), token))
	}
	return &Client{api: api, token: token}, nil
}

// ListOpen lists every open pull request into base, following the pages (100 per page).
func (c *Client) ListOpen(ctx context.Context, r forge.Repo, base string) ([]forge.PullRequest, error) {
	opts := &gh.PullRequestListOptions{
		State:       "open",
		Base:        base,
		ListOptions: gh.ListOptions{Page: 1, PerPage: perPage},
	}
	var out []forge.PullRequest
	for range maxPages {
		prs, resp, err := c.api.PullRequests.List(ctx, r.Owner, r.Name, opts)
		if err != nil {
			return nil, c.fail(fmt.Sprintf("list open pull requests into %q in %s (page %d)", base, r, opts.Page), err)
		}
		for _, pr := range prs {
			out = append(out, convert(r, pr))
		}
		if resp.NextPage == 0 {
			return out, nil
		}
		if resp.NextPage <= opts.Page {
			return nil, fmt.Errorf("github: list open pull requests into %q in %s: page %d links back to page %d", base, r, opts.Page, resp.NextPage)
		}
		opts.Page = resp.NextPage
	}
	return nil, fmt.Errorf("github: list open pull requests into %q in %s: more than %d pages", base, r, maxPages)
}

// Create opens a pull request (maintainers may modify it) and then adds req.Labels, if any.
// When the pull request opens but the labels cannot be added, Create returns the pull request
// together with the error. An open pull request for the same head and base gives an error
// wrapping forge.ErrPullRequestExists.
func (c *Client) Create(ctx context.Context, r forge.Repo, req forge.NewChangeRequest) (forge.PullRequest, error) {
	created, _, err := c.api.PullRequests.Create(ctx, r.Owner, r.Name, gh.CreatePullRequest{
		Title:               new(req.Title),
		Head:                req.Head,
		Base:                req.Base,
		Body:                new(req.Body),
		MaintainerCanModify: new(true),
	})
	if err != nil {
		return forge.PullRequest{}, c.fail(fmt.Sprintf("create pull request %s -> %s in %s", req.Head, req.Base, r), err)
	}
	pr := convert(r, created)
	if len(req.Labels) == 0 {
		return pr, nil
	}
	if _, _, err := c.api.Issues.AddLabelsToIssue(ctx, r.Owner, r.Name, pr.Number, req.Labels); err != nil {
		return pr, c.fail(fmt.Sprintf("add labels %q to pull request #%d in %s", req.Labels, pr.Number, r), err)
	}
	return pr, nil
}

// Close comments on the pull request (unless comment is empty), then closes it.
func (c *Client) Close(ctx context.Context, r forge.Repo, number int, comment string) error {
	if comment != "" {
		if _, _, err := c.api.Issues.CreateComment(ctx, r.Owner, r.Name, number, gh.IssueCommentRequest{Body: comment}); err != nil {
			return c.fail(fmt.Sprintf("comment on pull request #%d in %s", number, r), err)
		}
	}
	if _, _, err := c.api.PullRequests.Edit(ctx, r.Owner, r.Name, number, &gh.PullRequest{State: new("closed")}); err != nil {
		return c.fail(fmt.Sprintf("close pull request #%d in %s", number, r), err)
	}
	return nil
}

// DeleteBranch deletes refs/heads/<branch> (a leading "refs/heads/" is accepted). A branch that
// no longer exists is not an error: the goal is reached.
func (c *Client) DeleteBranch(ctx context.Context, r forge.Repo, branch string) error {
	branch = strings.TrimPrefix(branch, "refs/heads/")
	if branch == "" {
		return fmt.Errorf("github: delete branch in %s: empty branch name", r)
	}
	_, err := c.api.Git.DeleteRef(ctx, r.Owner, r.Name, "heads/"+branch)
	if err != nil && !refMissing(err) {
		return c.fail(fmt.Sprintf("delete branch %q in %s", branch, r), err)
	}
	return nil
}

// SetStatus creates a commit status (the latest one per context is what GitHub shows). The
// description is shortened to 140 characters, with an ellipsis.
func (c *Client) SetStatus(ctx context.Context, r forge.Repo, commit string, s forge.CommitStatus) error {
	if commit == "" || s.Context == "" {
		return fmt.Errorf("github: set status in %s: commit and context are required", r)
	}
	status := gh.RepoStatus{State: new(string(s.State)), Context: new(s.Context), Description: new(shorten(s.Description, maxDescription))}
	if s.TargetURL != "" {
		status.TargetURL = new(s.TargetURL)
	}
	if _, _, err := c.api.Repositories.CreateStatus(ctx, r.Owner, r.Name, commit, status); err != nil {
		return c.fail(fmt.Sprintf("set status %q on %s in %s", s.Context, commit, r), err)
	}
	return nil
}

// shorten cuts s to at most n runes, ending in "…" when cut.
func shorten(s string, n int) string {
	runes := []rune(s)
	if len(runes) <= n {
		return s
	}
	return string(runes[:n-1]) + "…"
}

// convert maps a go-github pull request onto forge's view of it.
func convert(r forge.Repo, pr *gh.PullRequest) forge.PullRequest {
	return forge.PullRequest{
		Number:          pr.GetNumber(),
		URL:             pr.GetHTMLURL(),
		Head:            pr.GetHead().GetRef(),
		Base:            pr.GetBase().GetRef(),
		Title:           pr.GetTitle(),
		Body:            pr.GetBody(),
		Author:          pr.GetUser().GetLogin(),
		CrossRepository: crossRepository(r, pr),
	}
}

// crossRepository reports whether pr's head branch lives outside the base repository r.
func crossRepository(r forge.Repo, pr *gh.PullRequest) bool {
	head, base := pr.GetHead().GetRepo(), pr.GetBase().GetRepo()
	switch {
	case head == nil: // a deleted fork
		return true
	case head.GetID() != 0 && base.GetID() != 0: // ids survive renames and transfers
		return head.GetID() != base.GetID()
	default:
		return !strings.EqualFold(head.GetFullName(), r.String())
	}
}
