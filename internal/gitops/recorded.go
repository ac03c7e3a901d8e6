package gitops

import (
	"strings"

	"github.com/fleetform/fleetform/internal/render"
)

// recorded is what the state records for a cluster type's assignments: its shard (each
// deployment target's digest and workload) and their keys. Each is held by position when
// it lists exactly the cluster type's current assignments in their order, as it does unless
// targets were added or removed since: then nothing is looked up by name and no map is
// built (with a change to one workload, a million-assignment plan read every cluster type's
// shard and keys into maps, and looked each assignment up in them four times). Otherwise it
// is held by deployment target.
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

// shard returns the shard by deployment target (nil: none to trust).
func (r *recorded) shard(as []*render.Assignment) shard {
	if r.at == nil {
		return r.byName
	}
	s := make(shard, len(r.at))
	for i, e := range r.at {
		s[as[i].DeploymentTarget] = e
	}
	return s
}

// keys returns the keys by deployment target (nil: none).
func (r *recorded) keys(as []*render.Assignment) assignmentKeys {
	if r.keysAt == nil {
		return r.keysByName
	}
	k := make(assignmentKeys, len(r.keysAt))
	for i, key := range r.keysAt {
		k[as[i].DeploymentTarget] = key
	}
	return k
}

// setShard decodes a shard, by position when it lines up with as. A shard that is not one
// is an error (decodeShard's).
func (r *recorded) setShard(name string, data []byte, as []*render.Assignment) error {
	r.at, r.byName = nil, nil
	if at, ok := shardAt(data, as); ok {
		r.at = at
		return nil
	}
	s, err := decodeShard(name, data)
	r.byName = s
	return err
}

// setKeys decodes recorded keys, by position when they line up with as.
func (r *recorded) setKeys(name string, data []byte, as []*render.Assignment) error {
	r.keysAt, r.keysByName = nil, nil
	if at, ok := keysAt(data, as); ok {
		r.keysAt = at
		return nil
	}
	k, err := decodeKeys(name, data)
	r.keysByName = k
	return err
}

// drop forgets the shard and the keys.
func (r *recorded) drop() { *r = recorded{} }

// shardAt decodes a shard into entries by position, when its lines name exactly the
// deployment targets of as, in order, and each line is well formed (decodeShard's rules).
func shardAt(data []byte, as []*render.Assignment) ([]shardEntry, bool) {
	text := string(data) // one string: the entries' fields are slices of it
	at := make([]shardEntry, 0, len(as))
	for text != "" {
		line, rest, _ := strings.Cut(text, "\n")
		text = rest
		dt, digest, wl, ok := shardFields(line)
		if !ok || len(at) == len(as) || as[len(at)].DeploymentTarget != dt {
			return nil, false
		}
		if wl == "-" {
			wl = ""
		}
		at = append(at, shardEntry{digest: digest, workload: wl})
	}
	return at, len(at) == len(as) && len(as) > 0
}

// keysAt decodes recorded keys by position, when their lines name exactly the deployment
// targets of as, in order, and each line is well formed (decodeKeys's rules).
func keysAt(data []byte, as []*render.Assignment) ([]string, bool) {
	text := string(data)
	at := make([]string, 0, len(as))
	for text != "" {
		line, rest, _ := strings.Cut(text, "\n")
		text = rest
		dt, key, ok := keysFields(line)
		if !ok || len(at) == len(as) || as[len(at)].DeploymentTarget != dt {
			return nil, false
		}
		at = append(at, key)
	}
	return at, len(at) == len(as) && len(as) > 0
}
