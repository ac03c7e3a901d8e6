package fleet

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/fleetform/fleetform/api/v1alpha1"
	"github.com/fleetform/fleetform/internal/access"
	"github.com/fleetform/fleetform/internal/authoring"
	"github.com/fleetform/fleetform/internal/forge"
	"github.com/fleetform/fleetform/internal/hub/client"
	"github.com/fleetform/fleetform/internal/pipeline"
	"github.com/fleetform/fleetform/internal/repourl"
)

// AuthorRequest is a change of the control plane.
type AuthorRequest struct {
	Operations []authoring.Operation
	// Mode says what is done with a valid change: written, committed, proposed as a pull
	// request, or only validated and planned.
	Mode authoring.Mode
	// Message is the commit subject ("": what the operations do).
	Message string
	// Actor, when set, is recorded in the commit message.
	Actor string
	// Identity, when set, is who asks: the change is judged by what it touches (its files'
	// documents), and refused with a ForbiddenError unless the Fleet's Rights allow it. Its
	// commits are authored by the identity (commitAuthor), committed by the Fleet's author,
	// and say who in their Changed-By trailer (changedBy), instead of Actor.
	Identity *access.Identity
	// Propose, with Identity and ModePR (or ModeDryRun), proposes the change for review
	// without judging it here: the pull request's reviewers decide (what someone who may
	// not make a change may still do).
	Propose bool
	// Decision, when set with Identity, receives the access decision on the change (its
	// reason is recorded with the change in the hub's history).
	Decision *access.Decision
}

// Author makes a change of the control plane (authoring.Apply): the edits, the whole
// control plane validated with them and each environment's plan, then what req.Mode says,
// as the Fleet's author. A change that would make the control plane invalid is an
// InvalidError along with the result, which locates the errors; a branch that kept moving
// is ErrConflict.
func (f *Fleet) Author(ctx context.Context, req AuthorRequest) (*authoring.Result, error) {
	ar := authoring.Request{ControlPlane: f.cfg.ControlPlane, Platform: f.cfg.Read, Operations: req.Operations, Mode: req.Mode,
		Author: object.Signature{Name: f.cfg.Author.Name, Email: f.cfg.Author.Email}, Message: req.Message, Actor: req.Actor,
		Logger: f.cfg.Logger, Credentials: f.cfg.Credentials, CacheDir: f.cacheDir(), Renders: f.renders}
	if req.Mode == authoring.ModePR {
		ar.OpenPR = f.openPullRequest
	}
	if id := req.Identity; id != nil {
		if sig, ok := commitAuthor(*id); ok {
			ar.Author, ar.Committer, ar.Actor = sig, ar.Author, changedBy(*id, sig)
		}
		if req.Propose && req.Mode != authoring.ModePR && req.Mode != authoring.ModeDryRun {
			return nil, Usagef("a proposal is a pull request (or its dry run), not %s", req.Mode)
		}
	}
	if id := req.Identity; id != nil && !req.Propose {
		ar.Permit = func(s authoring.Scope) error {
			d := f.Decide(*id, access.Request{Action: v1alpha1.ActionAuthor, Workspaces: s.Workspaces, Platform: s.Platform})
			if req.Decision != nil {
				*req.Decision = d
			}
			return d.Err()
		}
	}
	res, err := authoring.Apply(ctx, ar)
	switch {
	case errors.Is(err, authoring.ErrInvalid) && res != nil:
		return res, &InvalidError{Errors: max(len(res.Errors), 1), Err: err}
	case errors.Is(err, authoring.ErrConflict):
		return res, fmt.Errorf("%w: %w", ErrConflict, err)
	}
	return res, err
}

// AuthoringMode settles what is done with a change of the control plane at location made
// through serve (its --authoring flag): commit, push or pr. A URL is pushed to or
// proposed to (pr by default, commit refused), a local control plane committed to (pr with
// prDefault, push refused).
func AuthoringMode(location, flag string, prDefault bool) (authoring.Mode, error) {
	_, local := repourl.LocalPath(location)
	switch authoring.Mode(flag) {
	case "":
		if !local || prDefault {
			return authoring.ModePR, nil
		}
		return authoring.ModeCommit, nil
	case authoring.ModeCommit:
		if !local {
			return "", fmt.Errorf("--authoring commit: the control plane %s is a URL: a change is pushed to it (--authoring push) or proposed as a pull request (--authoring pr)",
				repourl.Redact(location))
		}
	case authoring.ModePush:
		if local {
			return "", errors.New("--authoring push: the control plane is local: a change is committed to it (--authoring commit)")
		}
	case authoring.ModePR:
	default:
		return "", fmt.Errorf("--authoring %q: want push, pr or commit", flag)
	}
	return authoring.Mode(flag), nil
}

// openPullRequest opens the pull request of a change on the forge of repoURL: each change
// is its own, none supersedes another.
func (f *Fleet) openPullRequest(ctx context.Context, repoURL string, req forge.NewChangeRequest) (*forge.PullRequest, error) {
	repo, client, err := pipeline.ForgeClient(ctx, f.cfg.Credentials, repoURL, f.cfg.ForgeURL)
	if err != nil {
		return nil, err
	}
	pr, _, err := forge.OpenPullRequest(ctx, client, repo, "", req, f.cfg.Logger)
	if err != nil {
		return nil, err
	}
	return &forge.PullRequest{Number: pr.Number, URL: pr.URL, Head: pr.Head, Base: pr.Base}, nil
}

// AuthorThrough sends a change to fleetform serve's authoring API (c's server, as c's
// token): decided there by the access policies and made on serve's control plane (with
// dryRun, validated and planned only). Its outcomes are Author's: an InvalidError with the
// result, a ForbiddenError with serve's reason, ErrConflict.
func AuthorThrough(ctx context.Context, c *client.Client, ops []authoring.Operation, dryRun bool) (*authoring.Result, error) {
	res, err := c.ChangeControlPlane(ctx, ops, dryRun)
	var ce *client.Error
	if !errors.As(err, &ce) {
		return res, err
	}
	switch ce.Status {
	case http.StatusUnprocessableEntity:
		return res, &InvalidError{Errors: max(len(res.Errors), 1), Err: fmt.Errorf("%w (fleetform serve)", authoring.ErrInvalid)}
	case http.StatusForbidden:
		return nil, &ForbiddenError{Decision: access.Decision{Reason: ce.Message}}
	case http.StatusConflict:
		return nil, fmt.Errorf("%w: %s", ErrConflict, ce.Message)
	case http.StatusBadRequest:
		return nil, Usage(err)
	}
	return nil, err
}
