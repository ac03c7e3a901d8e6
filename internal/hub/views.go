package hub

import (
	"context"
	"errors"
)

// LatestDesired returns an environment's most recently posted desired state.
func (h *Hub) LatestDesired(ctx context.Context, env string) (Desired, error) {
	var out Desired
	err := h.store.View(ctx, func(r Reader) error {
		var err error
		out, err = r.LatestDesired(ctx, env)
		if errors.Is(err, ErrNotFound) {
			return Errorf(CodeNotFound, "environment %q has no desired state: fleetform apply --hub posts it", env)
		}
		return err
	})
	return out, err
}

// Versions returns the latest version application CI reported for every deployment target
// of an environment.
func (h *Hub) Versions(ctx context.Context, env string) ([]WorkloadVersion, error) {
	var out []WorkloadVersion
	err := h.store.View(ctx, func(r Reader) error {
		var err error
		out, err = r.WorkloadVersions(ctx, env)
		return err
	})
	return out, err
}

// Clusters lists an environment's clusters ("" for all), by name.
func (h *Hub) Clusters(ctx context.Context, env string) ([]ClusterRecord, error) {
	var out []ClusterRecord
	err := h.store.View(ctx, func(r Reader) error {
		var err error
		out, err = r.Clusters(ctx, env)
		return err
	})
	return out, err
}

// ClusterPage lists up to limit clusters of one cluster type of an environment, by name,
// after skipping offset of them, and counts them all.
func (h *Hub) ClusterPage(ctx context.Context, env, clusterType string, offset, limit int) ([]ClusterRecord, int, error) {
	var out []ClusterRecord
	var total int
	err := h.store.View(ctx, func(r Reader) error {
		var err error
		out, total, err = r.ClusterPage(ctx, env, clusterType, offset, limit)
		return err
	})
	return out, total, err
}
