package hub

import (
	"context"
	"errors"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
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
	return h.SearchClusters(ctx, ClusterFilter{Environment: env, ClusterType: clusterType}, offset, limit)
}

// ClusterFilter selects clusters; empty fields match everything.
type ClusterFilter struct {
	Environment, ClusterType string
	// Name is part of the name, in any case.
	Name string
	// State is a reported status (Compliant, NonCompliant, Progressing) of a fresh report,
	// or "unknown" (StateUnknown): never reported, or its report is stale.
	State string
	// LabelKey and LabelValue select the clusters with that label.
	LabelKey, LabelValue string
}

// OrderBy is the SQL order of a cluster search, the same on every store: by name, in natural
// order (edge-2 before edge-10: the name without its trailing digits, then its length) for a
// search that selects; by name alone for the whole fleet, which the primary key gives a page
// of without sorting every cluster.
func (f ClusterFilter) OrderBy() string {
	if f != (ClusterFilter{}) {
		return `rtrim(name, '0123456789'), length(name), name`
	}
	return `name`
}

// SearchClusters lists up to limit of the clusters f selects, by name, after skipping offset
// of them, and counts them all. A state or label key that cannot be one is CodeInvalid.
func (h *Hub) SearchClusters(ctx context.Context, f ClusterFilter, offset, limit int) ([]ClusterRecord, int, error) {
	switch f.State {
	case "", string(StateUnknown), string(Compliant), string(NonCompliant), string(Progressing):
	default:
		return nil, 0, Errorf(CodeInvalid, "state %q: want %s, %s, %s or %s", f.State, Compliant, NonCompliant, Progressing, StateUnknown)
	}
	if f.LabelKey != "" {
		if errs := validation.IsQualifiedName(f.LabelKey); len(errs) > 0 {
			return nil, 0, Errorf(CodeInvalid, "label %q is not a label key: %s", f.LabelKey, strings.Join(errs, "; "))
		}
	}
	var out []ClusterRecord
	var total int
	err := h.store.View(ctx, func(r Reader) error {
		var err error
		out, total, err = r.SearchClusters(ctx, f, offset, limit)
		return err
	})
	return out, total, err
}
