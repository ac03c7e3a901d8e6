package cli

import (
	"context"

	"github.com/fleetform/fleetform/internal/cli/command"
	"github.com/fleetform/fleetform/internal/fleet"
	"github.com/fleetform/fleetform/internal/hub"
	"github.com/fleetform/fleetform/internal/hub/client"
	"github.com/fleetform/fleetform/internal/pipeline"
	"github.com/fleetform/fleetform/internal/promote"
)

// hubOptions are the --hub flag, and what the commands that take it make of the hub.
type hubOptions struct{ command.Hub }

// hub is the hub the use cases talk to through --hub (nil without it).
func (o *hubOptions) hub() (fleet.Hub, error) {
	if o.URL == "" {
		return nil, nil
	}
	c, err := o.Client()
	if err != nil {
		return nil, err
	}
	return fleet.RemoteHub(c), nil
}

// promoteHub returns the hub promote checks its gates on and records its decisions in.
func (o *hubOptions) promoteHub(context.Context) (promote.Hub, error) {
	c, err := o.Client()
	if err != nil {
		return nil, err
	}
	return httpHub{c: c}, nil
}

// httpHub adapts the hub client to promote.Hub. The client's errors match hub.ErrNotFound
// for a 404 and unwrap to a *hub.Error, as promote.Hub requires.
type httpHub struct{ c *client.Client }

var _ promote.Hub = httpHub{}

// Source implements promote.Hub.
func (h httpHub) Source(ctx context.Context, env string) (promote.SourceState, error) {
	s, err := h.c.Source(ctx, env)
	if err != nil {
		return promote.SourceState{}, err
	}
	return promote.SourceState{Rollout: s.Rollout, DesiredCommit: s.PromotedCommit, DesiredPostedAt: s.PostedAt, LastChange: s.LastChange}, nil
}

// Approved implements promote.Hub.
func (h httpHub) Approved(ctx context.Context, env, commit string) (bool, error) {
	return h.c.Approved(ctx, env, commit)
}

// Record implements promote.Hub.
func (h httpHub) Record(ctx context.Context, e hub.Event) error { return h.c.Record(ctx, e) }

// poster returns the hub the desired state of an apply goes to, or nil without --hub.
func (o *hubOptions) poster() pipeline.DesiredPoster {
	if o.URL == "" {
		return nil
	}
	return lazyPoster{o: o}
}

// lazyPoster posts through the hub's client, made at the first post (the token is checked
// before anything is written, by the commands that take --hub).
type lazyPoster struct{ o *hubOptions }

// PostDesired implements pipeline.DesiredPoster.
func (p lazyPoster) PostDesired(ctx context.Context, d hub.Desired) error {
	c, err := p.o.Client()
	if err != nil {
		return err
	}
	_, err = c.PostDesired(ctx, d)
	return err
}
