package fleet

import (
	"context"
	"errors"
	"fmt"

	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/fleetform/fleetform/api/v1alpha1"
	"github.com/fleetform/fleetform/internal/access"
	"github.com/fleetform/fleetform/internal/authoring"
	"github.com/fleetform/fleetform/internal/forge"
	"github.com/fleetform/fleetform/internal/pipeline"
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
	// documents), and refused with a ForbiddenError unless the Fleet's Rights allow it.
	Identity *access.Identity
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
		Logger: f.cfg.Logger, Credentials: f.cfg.Credentials}
	if req.Mode == authoring.ModePR {
		ar.OpenPR = f.openPullRequest
	}
	if id := req.Identity; id != nil {
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
