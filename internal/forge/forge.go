package forge

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
)

// PullRequest is a pull request as fleetform sees it. Its JSON is what fleetform's commands
// print of a pull request they opened: number, url, head and base.
type PullRequest struct {
	// Number is the pull request's number in its repository.
	Number int `json:"number"`
	// URL is the pull request's web (html) URL.
	URL string `json:"url"`
	// Head is the head branch name, without refs/heads/.
	Head string `json:"head"`
	// Base is the base branch name, without refs/heads/.
	Base string `json:"base"`
	// Title is the pull request's title.
	Title string `json:"-"`
	// Body is the pull request's description (markdown), where fleetform puts its Marker.
	Body string `json:"-"`
	// Author is the login of the account that opened the pull request.
	Author string `json:"-"`
	// CrossRepository is true when the head branch lives in another repository (a fork), or in
	// a repository that no longer exists. fleetform pushes its branches to the repository itself,
	// so such a pull request is never fleetform's own (see Owned). Default false.
	CrossRepository bool `json:"-"`
}

// Repo identifies a repository on a forge.
type Repo struct{ Owner, Name string }

// String returns "owner/name".
func (r Repo) String() string { return r.Owner + "/" + r.Name }

// NewChangeRequest is what apply asks for.
type NewChangeRequest struct {
	// Base is the branch the changes go into.
	Base string
	// Head is the branch holding the changes; for fleetform's own pull requests it starts with
	// BranchPrefix(env).
	Head string
	// Title is the pull request's title.
	Title string
	// Body is the pull request's description; for fleetform's own pull requests it carries
	// Marker(env).
	Body string
	// Labels are added to the pull request after it is opened; none when empty.
	Labels []string
}

// PullRequests is the forge API apply needs (implemented by forge/github, and by a fake in tests).
type PullRequests interface {
	// ListOpen lists every open pull request into base (all pages).
	ListOpen(ctx context.Context, r Repo, base string) ([]PullRequest, error)
	// Create opens a pull request and adds its labels.
	Create(ctx context.Context, r Repo, req NewChangeRequest) (PullRequest, error)
	// Close closes a pull request with a comment saying why.
	Close(ctx context.Context, r Repo, number int, comment string) error
	// DeleteBranch deletes a branch (used for fleetform's own superseded PR branches only).
	DeleteBranch(ctx context.Context, r Repo, branch string) error
}

// ErrPullRequestExists is returned (wrapped) by PullRequests.Create when the forge already has an
// open pull request for the same head and base branches.
var ErrPullRequestExists = errors.New("a pull request already exists for this head branch")

// ErrUnauthorized is returned (wrapped) when the forge rejects the credentials (HTTP 401): the
// token is missing, wrong, expired or revoked.
var ErrUnauthorized = errors.New("the forge rejected the credentials (check the token)")

// RateLimitError reports that the forge refused a request because a rate limit was exceeded.
// Callers find it with errors.As and should not retry before Reset (or RetryAfter).
type RateLimitError struct {
	// Reset is when the limit resets; zero when the forge did not say.
	Reset time.Time
	// RetryAfter is how long the forge asked to wait; zero when it did not say.
	RetryAfter time.Duration
	// Secondary is true for a secondary (abuse, burst) limit rather than the hourly quota.
	Secondary bool
	// Message is the forge's own message.
	Message string
}

// Error names the kind of limit, when it resets and the forge's message.
func (e *RateLimitError) Error() string {
	kind := "rate limit exceeded"
	if e.Secondary {
		kind = "secondary rate limit exceeded"
	}
	var when []string
	if !e.Reset.IsZero() {
		when = append(when, "resets at "+e.Reset.UTC().Format(time.RFC3339))
	}
	if e.RetryAfter > 0 {
		when = append(when, "retry after "+e.RetryAfter.String())
	}
	if len(when) == 0 {
		when = append(when, "reset time unknown")
	}
	msg := fmt.Sprintf("%s (%s)", kind, strings.Join(when, ", "))
	if e.Message != "" {
		msg += ": " + e.Message
	}
	return msg
}

// BranchPrefix returns the prefix of the head branches of fleetform's pull requests for env:
// "fleetform/<env>/".
func BranchPrefix(env string) string { return "fleetform/" + env + "/" }

// Marker returns the hidden marker fleetform puts in the body of its pull requests for an
// environment: "<!-- fleetform:environment=<env> -->".
func Marker(env string) string { return "<!-- fleetform:environment=" + env + " -->" }

// Owned reports whether pr is fleetform's own pull request for env: its head branch starts with
// "fleetform/<env>/" AND its body carries Marker(env). Human pull requests are never owned, and
// neither is a pull request from another repository (a fork), whatever its branch and body say.
func Owned(pr PullRequest, env string) bool {
	if env == "" || pr.CrossRepository {
		return false
	}
	return strings.HasPrefix(pr.Head, BranchPrefix(env)) && strings.Contains(pr.Body, Marker(env))
}

// StatusState is the state of a commit status.
type StatusState string

// Commit status states (GitHub's names).
const (
	StatusPending StatusState = "pending"
	StatusSuccess StatusState = "success"
	StatusFailure StatusState = "failure"
	StatusError   StatusState = "error"
)

// CommitStatus is a status set on a commit, one per Context.
type CommitStatus struct {
	State StatusState
	// Context names the check ("<env> environment" for promotions, as Kalypso does).
	Context string
	// Description is one line (forges shorten it: GitHub keeps 140 characters).
	Description string
	// TargetURL links to details; optional.
	TargetURL string
}

// CommitStatuses is the forge API promote reports to.
type CommitStatuses interface {
	// SetStatus sets (replaces) the status of commit for s.Context.
	SetStatus(ctx context.Context, r Repo, commit string, s CommitStatus) error
}

// EnvironmentContext is the status context of promotions into env: "<env> environment".
func EnvironmentContext(env string) string { return env + " environment" }
