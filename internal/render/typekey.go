package render

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"maps"
	"runtime/debug"
	"slices"
	"strings"

	"github.com/fleetform/fleetform/internal/controlplane"
)

// TypeKey identifies everything the assignments as of cluster type ct are rendered from,
// without composing their configs: the render version, the environment, the cluster type's
// templates, name and labels, the config sources and schemas that can apply to it
// (compose.Composer.TypeDigest) and, for each assignment in order, its target (name,
// workload, workspace, labels, manifests, own schemas), namespace and pinned manifests.
// Equal keys mean equal InputDigests for every assignment, so a caller that recorded the
// key can skip the cluster type without preparing it. The key is "" when the assignments
// must be prepared anyway: under configSchemaPolicy warn (their waiting state is reported
// on every run), while an input is broken, or when the cluster type cannot render.
func (rr *Renderer) TypeKey(ct string, as []*Assignment) string {
	key, _ := rr.TypeKeys(ct, as)
	return key
}

// WorkloadKey identifies what one workload's assignments on a cluster type are rendered
// from, as TypeKey does for all of the cluster type's: equal keys mean equal InputDigests
// for each of them.
type WorkloadKey struct {
	Workload string
	Key      [16]byte
	// Assignments counts its assignments on the cluster type.
	Assignments int
}

// String is the key in hexadecimal.
func (k WorkloadKey) String() string { return hex.EncodeToString(k.Key[:]) }

// TypeKeys returns TypeKey and, sorted by workload, the key of each workload's assignments
// among as (nil with TypeKey ""): one pass over the assignments makes both, the cluster
// type's key being that of its workloads' keys.
func (rr *Renderer) TypeKeys(ct string, as []*Assignment) (string, []WorkloadKey) {
	base, ok := rr.typeBase(ct)
	if !ok {
		return "", nil
	}
	groups, members := groupByWorkload(as)
	// Fields go through a buffer hashed 64 KiB at a time: a write to the hash per field was
	// most of the key's cost.
	h := sha256.New()
	b := make([]byte, 0, 64<<10+1024)
	var sum [sha256.Size]byte
	keys := make([]WorkloadKey, len(groups))
	all := appendFields(append(make([]byte, 0, len(base)+64+len(groups)*64), base...), "workloads/1")
	for g, wl := range groups {
		h.Reset()
		b = append(b[:0], base...)
		for k := wl.first; k < wl.first+wl.count; k++ {
			b = rr.appendAssignment(b, as[member(members, k)])
			if len(b) >= 64<<10 {
				h.Write(b)
				b = b[:0]
			}
		}
		h.Write(b)
		k := WorkloadKey{Workload: wl.name, Assignments: wl.count}
		copy(k.Key[:], h.Sum(sum[:0]))
		keys[g] = k
		all = appendFields(all, wl.name)
		all = append(all, k.Key[:]...)
	}
	typeSum := sha256.Sum256(all)
	return hex.EncodeToString(typeSum[:16]), keys
}

// WorkloadTargets identifies, for each workload of as (all on one cluster type), the names
// of its deployment targets: equal, the same deployment-target folders.
func WorkloadTargets(as []*Assignment) map[string]string {
	groups, members := groupByWorkload(as)
	out := make(map[string]string, len(groups))
	var names []byte
	for _, wl := range groups {
		names = names[:0]
		for k := wl.first; k < wl.first+wl.count; k++ {
			names = appendFields(names, as[member(members, k)].DeploymentTarget)
		}
		sum := sha256.Sum256(names)
		out[wl.name] = hex.EncodeToString(sum[:16])
	}
	return out
}

// workloadGroup is one workload's assignments among a cluster type's: members[first :
// first+count] of groupByWorkload.
type workloadGroup struct {
	name         string
	first, count int
}

// groupByWorkload groups as by workload: the groups sorted by name, and the positions in as
// of each group's assignments, in their order, one group after the other. A workload's
// assignments usually follow each other, in the order of the workloads' names (its
// targets' names share a prefix): then the positions are nil, the groups' ranges those of
// as, and nothing is looked up.
func groupByWorkload(as []*Assignment) ([]workloadGroup, []int32) {
	var groups []workloadGroup
	for i, a := range as {
		switch {
		case i > 0 && a.Workload == as[i-1].Workload:
			groups[len(groups)-1].count++
		case i > 0 && a.Workload < as[i-1].Workload:
			return groupByWorkloadMap(as) // a workload's assignments apart, or out of order
		default:
			groups = append(groups, workloadGroup{name: a.Workload, first: i, count: 1})
		}
	}
	return groups, nil
}

// groupByWorkloadMap is groupByWorkload for assignments in any order.
func groupByWorkloadMap(as []*Assignment) ([]workloadGroup, []int32) {
	at := map[string]int{}
	var groups []workloadGroup
	of := make([]int32, len(as)) // each assignment's group
	last := -1
	for i, a := range as {
		if last < 0 || groups[last].name != a.Workload {
			g, ok := at[a.Workload]
			if !ok {
				g = len(groups)
				at[a.Workload] = g
				groups = append(groups, workloadGroup{name: a.Workload})
			}
			last = g
		}
		of[i] = int32(last)
		groups[last].count++
	}
	order := make([]int, len(groups))
	for g := range order {
		order[g] = g
	}
	slices.SortFunc(order, func(x, y int) int { return strings.Compare(groups[x].name, groups[y].name) })
	sorted := make([]workloadGroup, len(groups))
	rank := make([]int, len(groups)) // a group's place in sorted
	first := 0
	for r, g := range order {
		sorted[r] = workloadGroup{name: groups[g].name, first: first, count: groups[g].count}
		rank[g] = r
		first += groups[g].count
	}
	members := make([]int32, len(as))
	next := make([]int, len(groups))
	for i, g := range of {
		r := rank[g]
		members[sorted[r].first+next[r]] = int32(i)
		next[r]++
	}
	return sorted, members
}

// member is the position in as of the k-th assignment of groupByWorkload's order.
func member(members []int32, k int) int {
	if members == nil {
		return k
	}
	return int(members[k])
}

// AssignmentKeys identify everything each assignment of as (all on cluster type ct) is
// rendered from without composing its config, as TypeKey does for the whole cluster type:
// equal keys mean equal InputDigests. They are nil when TypeKey is "".
func (rr *Renderer) AssignmentKeys(ct string, as []*Assignment) []string {
	base, ok := rr.typeBase(ct)
	if !ok {
		return nil
	}
	keys := make([]string, len(as))
	buf := make([]byte, 0, 512)
	for i, a := range as {
		sum := sha256.Sum256(rr.appendAssignment(append(buf[:0], base...), a))
		keys[i] = hex.EncodeToString(sum[:8])
	}
	return keys
}

// typeBase is the part of a cluster type's keys its assignments share: the render version,
// the fleetform build (BuildStamp), the environment, the templates, and the config sources and schemas that can apply
// (compose.Composer.TypeDigest). It reports false when the cluster type has no keys.
func (rr *Renderer) typeBase(ct string) ([]byte, bool) {
	r := rr.r
	tt, typ := r.types[ct], rr.clusterTypes[ct]
	if r.warn || len(r.broken) > 0 || tt == nil || tt.problem != "" || typ == nil {
		return nil, false
	}
	rr.basesMu.Lock()
	defer rr.basesMu.Unlock()
	if b, ok := rr.bases[ct]; ok {
		return b, true
	}
	typeDigest := r.composer.TypeDigest(typ)
	b := appendFields(nil, Version, rr.build, r.env, "type-key/2")
	b = append(b, tt.digest...)
	b = append(b, typeDigest[:]...)
	if rr.bases == nil {
		rr.bases = map[string][]byte{}
	}
	rr.bases[ct] = b
	return b, true
}

// appendAssignment appends what an assignment adds to its cluster type's inputs: its
// target's digest (name, workload, workspace, labels, manifests), the target's own schemas
// and the pinned manifests. Its namespace follows from the environment, the cluster type
// and the target's name: it is not appended again (nor the names the digest covers), so
// that every assignment hashes only what sets it apart.
func (rr *Renderer) appendAssignment(b []byte, a *Assignment) []byte {
	b = append(b, rr.r.targetDigest(a.Target)...)
	for _, s := range a.Target.ConfigSchemas {
		b = appendFields(b, s.Text)
	}
	b = appendFields(b, "") // the end of the target's schemas
	if a.Pinned != nil {
		for _, k := range slices.Sorted(maps.Keys(a.Manifests)) {
			b = appendFields(b, k, a.Manifests[k])
		}
	}
	return appendFields(b, "") // the end of the pinned manifests
}

// appendFields appends each string with its length, so that fields cannot run together.
func appendFields(b []byte, ss ...string) []byte {
	for _, s := range ss {
		b = binary.LittleEndian.AppendUint64(b, uint64(len(s)))
		b = append(b, s...)
	}
	return b
}

// PrepareBatch prepares the assignments as (see Prepare), on the renderer's workers: a
// caller that skips the cluster types whose TypeKey it recorded prepares only the others.
func (rr *Renderer) PrepareBatch(as []*Assignment) {
	rr.r.runEach(len(as), func(int) {}, func(i int) { rr.r.prepare(as[i]) })
}

// BuildStamp identifies the fleetform build, when the build recorded it (its module version,
// VCS revision and whether the tree was modified): folded into every key, so that after an
// upgrade every assignment is composed and digested once, whatever changed in composing.
func BuildStamp() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return ""
	}
	stamp := bi.Main.Version
	for _, s := range bi.Settings {
		if s.Key == "vcs.revision" || s.Key == "vcs.modified" {
			stamp += " " + s.Value
		}
	}
	return stamp
}

// clusterTypesByName indexes the schedule's cluster types.
func clusterTypesByName(cts []*controlplane.ClusterType) map[string]*controlplane.ClusterType {
	out := make(map[string]*controlplane.ClusterType, len(cts))
	for _, ct := range cts {
		out[ct.Metadata.Name] = ct
	}
	return out
}
