package promote

import (
	"context"
	"fmt"

	"github.com/fleetform/fleetform/internal/controlplane"
)

// Round is what one pass over the chain reads once: the environments, the chain they make,
// and each environment's snapshot (loaded when first asked for).
type Round struct {
	ControlPlane *controlplane.ControlPlane
	Envs         []controlplane.EnvironmentInfo
	Chain        *Chain
	snaps        map[string]*controlplane.Snapshot
}

// NewRound reads the environments of cp and builds their chain.
func NewRound(ctx context.Context, cp *controlplane.ControlPlane) (*Round, error) {
	envs, _, err := cp.Environments(ctx)
	if err != nil {
		return nil, err
	}
	chain, diags := NewChain(envs)
	if controlplane.HasErrors(diags) {
		return nil, fmt.Errorf("the promotion chain is invalid: %s", diags[0].Error())
	}
	return &Round{ControlPlane: cp, Envs: envs, Chain: chain, snaps: map[string]*controlplane.Snapshot{}}, nil
}

// Snapshot loads env once per round.
func (r *Round) Snapshot(ctx context.Context, env string) (*controlplane.Snapshot, error) {
	if s, ok := r.snaps[env]; ok {
		return s, nil
	}
	s, err := r.ControlPlane.Load(ctx, env)
	if err != nil {
		return nil, fmt.Errorf("load %s: %w", env, err)
	}
	r.snaps[env] = s
	return s, nil
}
