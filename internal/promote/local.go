package promote

import (
	"context"

	"github.com/fleetform/fleetform/internal/hub"
)

// LocalHub adapts an in-process hub.Hub (tests, a hub that promotes by itself).
type LocalHub struct{ Hub *hub.Hub }

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

// Record implements Hub.
func (l LocalHub) Record(ctx context.Context, e hub.Event) error { return l.Hub.Record(ctx, e) }
