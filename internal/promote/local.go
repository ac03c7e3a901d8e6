package promote

import (
	"context"

	"github.com/fleetform/fleetform/internal/hub"
)

// HubService is what the hub answers a promotion, in this process (*hub.Hub) or through its
// client (*client.Client).
type HubService interface {
	Source(ctx context.Context, env string) (hub.EnvironmentSource, error)
	Approved(ctx context.Context, env, commit string) (bool, error)
	Approvers(ctx context.Context, env, commit string, distinctFromAuthor bool) ([]string, error)
	Record(ctx context.Context, e hub.Event) error
}

// LocalHub adapts the hub's service to Hub: the hub itself, or its client (whose errors
// match hub.ErrNotFound for a 404 and unwrap to a *hub.Error, as Hub requires).
type LocalHub struct{ Hub HubService }

var _ Hub = LocalHub{}

// Source implements Hub.
func (l LocalHub) Source(ctx context.Context, env string) (SourceState, error) {
	s, err := l.Hub.Source(ctx, env)
	if err != nil {
		return SourceState{}, err
	}
	return SourceState{Rollout: s.Rollout, DesiredCommit: s.PromotedCommit, DesiredPostedAt: s.PostedAt, LastChange: s.LastChange}, nil
}

// Approved implements Hub.
func (l LocalHub) Approved(ctx context.Context, env, commit string) (bool, error) {
	return l.Hub.Approved(ctx, env, commit)
}

// Approvers implements Hub.
func (l LocalHub) Approvers(ctx context.Context, env, commit string, distinctFromAuthor bool) ([]string, error) {
	return l.Hub.Approvers(ctx, env, commit, distinctFromAuthor)
}

// Record implements Hub.
func (l LocalHub) Record(ctx context.Context, e hub.Event) error { return l.Hub.Record(ctx, e) }
