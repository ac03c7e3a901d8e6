package serve

import (
	"context"

	"github.com/fleetform/fleetform/internal/promote"
)

// ManualPromotions is the promotions page's use case: the chain's gates checked now, and a
// promotion a person asks for, through the same gates as `fleetform promote` (or overriding
// them, with a reason that is recorded). A promotion is applied at once.
type ManualPromotions struct {
	svc      *Service
	promoter *promote.Promoter
}

// Promotions returns the manual promotions of this service's control plane, made by p.
func (s *Service) Promotions(p *promote.Promoter) *ManualPromotions {
	return &ManualPromotions{svc: s, promoter: p}
}

// Review checks every environment's gates now, in the chain's order, changing nothing.
func (m *ManualPromotions) Review(ctx context.Context) ([]promote.Status, error) {
	cp, err := m.svc.open(ctx)
	if err != nil {
		return nil, err
	}
	return m.promoter.Review(ctx, cp, m.svc.opts.Now())
}

// Promote promotes into env for actor (overriding unmet gates when override is set; reason
// is then required) and, once the pin is committed, wakes the service to apply it.
func (m *ManualPromotions) Promote(ctx context.Context, env, actor, reason string, override bool) (promote.Result, error) {
	cp, err := m.svc.open(ctx)
	if err != nil {
		return promote.Result{}, err
	}
	res, err := m.promoter.Promote(ctx, promote.Request{ControlPlane: cp, To: env, Override: override, Reason: reason,
		Actor: actor, Now: m.svc.opts.Now()})
	if err == nil && res.Promoted {
		m.svc.Trigger(m.svc.opts.ControlPlane)
	}
	return res, err
}
