package promote

import (
	"context"
	"time"

	"github.com/fleetform/fleetform/internal/controlplane"
)

// Status is where an environment stands in the chain: its gates and, checked now, the
// commit a promotion would take with the sentences of the gates it does not meet (none:
// it would go through).
type Status struct {
	Gates Gates `json:"gates"`
	// Candidate is the control-plane commit a promotion would pin.
	Candidate string   `json:"candidate"`
	Unmet     []string `json:"unmet"`
	// Error is why the gates could not be checked ("" when they were).
	Error string `json:"error,omitempty"`
}

// Review checks the gates of every environment of cp's chain, in the chain's order,
// without promoting or recording anything.
func (p *Promoter) Review(ctx context.Context, cp *controlplane.ControlPlane, now time.Time) ([]Status, error) {
	round, err := NewRound(ctx, cp)
	if err != nil {
		return nil, err
	}
	out := make([]Status, 0, len(round.Chain.Order))
	for _, env := range round.Chain.Order {
		g := round.Chain.Gates[env]
		st := Status{Gates: g, Unmet: []string{}}
		ev, err := p.evidence(ctx, round, g, Request{ControlPlane: cp, To: env, Now: now, Round: round})
		if err != nil {
			st.Error = err.Error()
		} else {
			st.Candidate, st.Unmet = ev.Commit, Check(g, ev)
		}
		out = append(out, st)
	}
	return out, ctx.Err()
}

// Freezes describes an environment's freeze windows for people ("Sat 00:00–Sun 23:59
// Europe/Berlin: release freeze").
func (g Gates) Freezes() []string {
	out := make([]string, 0, len(g.Freeze))
	for _, w := range g.Freeze {
		out = append(out, w.String())
	}
	return out
}
