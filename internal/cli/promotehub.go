package cli

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/fleetform/fleetform/internal/hub"
	"github.com/fleetform/fleetform/internal/hub/client"
	"github.com/fleetform/fleetform/internal/pipeline"
	"github.com/fleetform/fleetform/internal/promote"
)

// hubTokenEnv is the environment variable the hub's token is read from.
const hubTokenEnv = "FLEETFORM_HUB_TOKEN" //nolint:gosec // the variable's name, not a token

// hubOptions are the flags of the commands that talk to a hub: --hub URL, and the token
// from FLEETFORM_HUB_TOKEN.
type hubOptions struct{ url string }

func (o *hubOptions) bind(cmd *cobra.Command) {
	cmd.Flags().StringVar(&o.url, "hub", "", "hub URL, e.g. https://hub.example.com (token from "+hubTokenEnv+")")
}

// bindRequired binds --hub for the commands that cannot work without it.
func (o *hubOptions) bindRequired(cmd *cobra.Command) {
	o.bind(cmd)
	_ = cmd.MarkFlagRequired("hub")
}

// clientFor checks the output format a read command was given, then returns the hub's
// client (the first steps of every such command).
func (o *hubOptions) clientFor(out outputOption) (*client.Client, error) {
	if err := out.check(); err != nil {
		return nil, err
	}
	return o.client()
}

// client returns a client of the hub with the token from the environment.
func (o *hubOptions) client() (*client.Client, error) {
	if o.url == "" {
		return nil, failed(ExitUsage, errors.New("--hub URL is required"))
	}
	token := os.Getenv(hubTokenEnv)
	if token == "" {
		return nil, failed(ExitUsage, fmt.Errorf("set %s to a hub token (the admin token, or a read-only one for reading)", hubTokenEnv))
	}
	c, err := client.New(o.url, token, nil)
	if err != nil {
		return nil, failed(ExitUsage, err)
	}
	return c, nil
}

// promoteHub returns the hub promote checks its gates on and records its decisions in.
func (o *hubOptions) promoteHub(context.Context) (promote.Hub, error) {
	c, err := o.client()
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
	if o.url == "" {
		return nil
	}
	return lazyPoster{o: o}
}

// lazyPoster posts through the hub's client, made at the first post (the token is checked
// before anything is written, by the commands that take --hub).
type lazyPoster struct{ o *hubOptions }

// PostDesired implements pipeline.DesiredPoster.
func (p lazyPoster) PostDesired(ctx context.Context, d hub.Desired) error {
	c, err := p.o.client()
	if err != nil {
		return err
	}
	_, err = c.PostDesired(ctx, d)
	return err
}
