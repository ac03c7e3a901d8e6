package hub

import (
	"context"
	"errors"
	"maps"
	"reflect"
	"slices"
)

// desiredIndex is a desired state by cluster type.
type desiredIndex struct {
	byType   map[string][]string // cluster type -> deployment targets, sorted
	workload map[string]string   // deployment target -> workload
}

func indexDesired(d Desired) *desiredIndex {
	idx := &desiredIndex{byType: map[string][]string{}, workload: map[string]string{}}
	for _, a := range d.Assignments {
		idx.byType[a.ClusterType] = append(idx.byType[a.ClusterType], a.DeploymentTarget)
		idx.workload[a.DeploymentTarget] = a.Workload
	}
	for ct := range idx.byType {
		slices.Sort(idx.byType[ct])
	}
	return idx
}

// targets returns the deployment targets scheduled on a cluster type (nil for a nil index).
func (d *desiredIndex) targets(clusterType string) []string {
	if d == nil {
		return nil
	}
	return d.byType[clusterType]
}

func (d *desiredIndex) workloadOf(dt string) string {
	if d == nil {
		return ""
	}
	return d.workload[dt]
}

// maxCachedDesired bounds the desired states kept in memory.
const maxCachedDesired = 256

// desiredAt returns the index of an environment's desired state at a revision, or nil when
// fleetform has not posted one (yet). Desired states never change, so found ones are cached;
// missing ones are not (another replica may receive it any moment). A cluster that never
// reported has no revision, and no desired state has an empty one: that costs no query
// (every first report of a cluster asks).
func (h *Hub) desiredAt(ctx context.Context, r Reader, env, revision string) (*desiredIndex, error) {
	if revision == "" {
		return nil, nil
	}
	key := env + "\x00" + revision
	h.mu.Lock()
	idx, ok := h.desired[key]
	h.mu.Unlock()
	if ok {
		return idx, nil
	}
	d, err := r.Desired(ctx, env, revision)
	if errors.Is(err, ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	idx = indexDesired(d)
	h.mu.Lock()
	if len(h.desired) >= maxCachedDesired {
		for k := range maps.Keys(h.desired) {
			delete(h.desired, k) // drop one arbitrary entry
			break
		}
	}
	h.desired[key] = idx
	h.mu.Unlock()
	return idx, nil
}

// sameAssignments compares two desired states' assignments, ignoring order.
func sameAssignments(a, b []DesiredAssignment) bool {
	if len(a) != len(b) {
		return false
	}
	key := func(x DesiredAssignment) string { return x.ClusterType + "/" + x.DeploymentTarget }
	byKey := map[string]DesiredAssignment{}
	for _, x := range a {
		byKey[key(x)] = x
	}
	for _, y := range b {
		x, ok := byKey[key(y)]
		if !ok || x.Workload != y.Workload || x.Namespace != y.Namespace || !maps.Equal(x.Manifests, y.Manifests) ||
			!reflect.DeepEqual(normalizeConfig(x.Config), normalizeConfig(y.Config)) || !slices.Equal(x.Waiting, y.Waiting) {
			return false
		}
	}
	return true
}

func normalizeConfig(m map[string]any) map[string]any {
	if len(m) == 0 {
		return nil
	}
	return m
}
