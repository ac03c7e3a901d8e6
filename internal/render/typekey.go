package render

import (
	"crypto/sha256"
	"encoding/hex"
	"maps"
	"slices"

	"github.com/fleetform/fleetform/internal/platform"
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
	r := rr.r
	tt, typ := r.types[ct], rr.clusterTypes[ct]
	if r.warn || len(r.broken) > 0 || tt == nil || tt.problem != "" || typ == nil {
		return ""
	}
	h := sha256.New()
	writeStrings(h, Version, r.env, "type-key/1")
	h.Write(tt.digest)
	typeDigest := r.composer.TypeDigest(typ)
	h.Write(typeDigest[:])
	for _, a := range as {
		writeStrings(h, a.DeploymentTarget, a.Workload, a.Namespace)
		h.Write(r.targetDigest(a.Target))
		for _, s := range a.Target.ConfigSchemas {
			writeStrings(h, s.Text)
		}
		writeStrings(h, "") // the end of the target's schemas
		if a.Pinned != nil {
			for _, k := range slices.Sorted(maps.Keys(a.Manifests)) {
				writeStrings(h, k, a.Manifests[k])
			}
		}
		writeStrings(h, "") // the end of the pinned manifests
	}
	var sum [sha256.Size]byte
	return hex.EncodeToString(h.Sum(sum[:0])[:16])
}

// PrepareBatch prepares the assignments as (see Prepare), on the renderer's workers: a
// caller that skips the cluster types whose TypeKey it recorded prepares only the others.
func (rr *Renderer) PrepareBatch(as []*Assignment) {
	rr.r.runEach(len(as), func(i int) *Assignment { return as[i] }, func(int) {}, rr.r.prepare)
}

// clusterTypesByName indexes the schedule's cluster types.
func clusterTypesByName(cts []*platform.ClusterType) map[string]*platform.ClusterType {
	out := make(map[string]*platform.ClusterType, len(cts))
	for _, ct := range cts {
		out[ct.Metadata.Name] = ct
	}
	return out
}
