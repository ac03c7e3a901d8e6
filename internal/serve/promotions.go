package serve

import (
	"context"

	"github.com/fleetform/fleetform/internal/fleet"
	"github.com/fleetform/fleetform/internal/hub"
	"github.com/fleetform/fleetform/internal/promote"
)

// ManualPromotions is the promotions page's use case: the chain's gates checked now, and a
// promotion a person asks for, through the same gates as `fleetform promote` (or overriding
// them, with a reason that is recorded). A promotion is applied at once.
type ManualPromotions struct{ svc *Service }

// Promotions returns the manual promotions of this service's control plane.
func (s *Service) Promotions() *ManualPromotions { return &ManualPromotions{svc: s} }

// Review checks every environment's gates now, in the chain's order, changing nothing.
func (m *ManualPromotions) Review(ctx context.Context) ([]promote.Status, error) {
	return m.svc.opts.Fleet.Review(ctx, m.svc.opts.Now())
}

// Promote promotes into env for actor (overriding unmet gates when override is set; reason
// is then required), recording by in the history, and, once the pin is committed, wakes the
// service to apply it.
func (m *ManualPromotions) Promote(ctx context.Context, env, actor, reason string, override bool, by *hub.Actor) (promote.Result, error) {
	res, err := m.svc.opts.Fleet.Promote(ctx, fleet.PromoteRequest{To: env, Override: override, Reason: reason,
		Actor: actor, By: by, Now: m.svc.opts.Now()})
	switch {
	case res == nil:
		return promote.Result{}, err
	case fleet.IsRefused(err):
		return res.Result, nil // the result says why
	case err == nil && res.Promoted:
		m.svc.Trigger(m.svc.controlPlane)
	}
	return res.Result, err
}
