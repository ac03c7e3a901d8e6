package gitops

import (
	"strings"

	"github.com/fleetform/fleetform/internal/render"
)

// recorded is what the state records for a cluster type's assignments: its shard (each
// deployment target's digest and workload) and their keys. Each is held by position when
// it lists exactly the cluster type's current assignments in their order, as it does unless
// targets were added or removed since: then nothing is looked up by name and no map is
// built (which, for a change to one workload, would cost more than the rest of the plan).
// Otherwise it is held by deployment target.
type recorded struct {
	at         []shardEntry // by position of typePlan.assigned (nil: see byName)
	byName     shard        // by deployment target (nil with at: none to trust)
	keysAt     []string     // by position (nil: see keysByName)
	keysByName assignmentKeys
}

// trusted reports whether there is a shard to trust.
func (r *recorded) trusted() bool { return r.at != nil || r.byName != nil }

// entry is what the shard records for the i-th assignment, a.
func (r *recorded) entry(i int, a *render.Assignment) (shardEntry, bool) {
	if r.at != nil {
		return r.at[i], true
	}
	e, ok := r.byName[a.DeploymentTarget]
	return e, ok
}

// key is the key recorded for the i-th assignment, a ("": none).
func (r *recorded) key(i int, a *render.Assignment) string {
	if r.keysAt != nil {
		return r.keysAt[i]
	}
	return r.keysByName[a.DeploymentTarget]
}

// lists reports whether the shard, held by position, records each of as with its current
// digest and workload: then the shard as as would encode it is the one read.
func (r *recorded) lists(as []*render.Assignment) bool {
	if r.at == nil || len(r.at) != len(as) {
		return false
	}
	for i, a := range as {
		if e := r.at[i]; e.digest != a.InputDigest || e.workload != a.Workload {
			return false
		}
	}
	return true
}

// shard returns the shard by deployment target (nil: none to trust).
func (r *recorded) shard(as []*render.Assignment) shard { return byTarget(r.at, r.byName, as) }

// keys returns the keys by deployment target (nil: none).
func (r *recorded) keys(as []*render.Assignment) assignmentKeys {
	return byTarget(r.keysAt, r.keysByName, as)
}

// byTarget returns values held by position (at, nil: byName) by deployment target.
func byTarget[T any, M ~map[string]T](at []T, byName M, as []*render.Assignment) M {
	if at == nil {
		return byName
	}
	m := make(M, len(at))
	for i, v := range at {
		m[as[i].DeploymentTarget] = v
	}
	return m
}

// setShard decodes a shard, by position when it lines up with as. A shard that is not one
// is an error (decodeShard's).
func (r *recorded) setShard(name string, data []byte, as []*render.Assignment) (err error) {
	r.at, r.byName, err = decodeFor(data, as, shardEntryFields, func() (shard, error) { return decodeShard(name, data) })
	return err
}

// setKeys decodes recorded keys, by position when they line up with as.
func (r *recorded) setKeys(name string, data []byte, as []*render.Assignment) (err error) {
	r.keysAt, r.keysByName, err = decodeFor(data, as, keysFields, func() (assignmentKeys, error) { return decodeKeys(name, data) })
	return err
}

// drop forgets the shard and the keys.
func (r *recorded) drop() { *r = recorded{} }

// decodeFor decodes a state file by position when it lines up with as (byPosition), and by
// deployment target with decode otherwise.
func decodeFor[T any, M ~map[string]T](data []byte, as []*render.Assignment, fields func(string) (string, T, bool),
	decode func() (M, error)) ([]T, M, error) {
	if at, ok := byPosition(data, as, fields); ok {
		return at, nil, nil
	}
	m, err := decode()
	return nil, m, err
}

// byPosition decodes the lines of a state file into values by position, when the
// deployment targets they start with are exactly those of as, in order, and fields finds
// each line well formed.
func byPosition[T any](data []byte, as []*render.Assignment, fields func(string) (string, T, bool)) ([]T, bool) {
	text := string(data) // one string: the values' fields are slices of it
	at := make([]T, 0, len(as))
	for text != "" {
		line, rest, _ := strings.Cut(text, "\n")
		text = rest
		dt, v, ok := fields(line)
		if !ok || len(at) == len(as) || as[len(at)].DeploymentTarget != dt {
			return nil, false
		}
		at = append(at, v)
	}
	return at, len(at) == len(as) && len(as) > 0
}
