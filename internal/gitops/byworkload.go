package gitops

import (
	"encoding/hex"
	"errors"
	"slices"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/fleetform/fleetform/internal/render"
)

// A plan by workload: the state records, per cluster type, the key of each workload's
// assignments (WorkloadsDir), and a plan that is only shown composes and renders only the
// assignments of the workloads whose key changed.

// planByWorkload picks, in a plan that is only shown, the cluster types of tps (those not
// the same) to be planned by workload, and returns the others. For those, the state's
// workload keys say which workloads' assignments changed: only theirs are composed and
// rendered, and neither the shard nor the assignments' keys is read: for a change of one
// workload, reading those would cost more than the rest of the plan.
func (pl *planner) planByWorkload(tps []*typePlan) (rest, byWorkload []*typePlan, err error) {
	if !pl.planOnly || pl.index == nil || len(pl.workloads) == 0 {
		return tps, nil, nil
	}
	var picked []*typePlan
	var shards, blobs []plumbing.Hash
	for _, tp := range tps { // the tree is walked here, in one goroutine
		h, ok := pl.workloads[tp.name]
		if !ok || tp.wkeys == nil || slices.ContainsFunc(tp.assigned, failed) {
			rest = append(rest, tp)
			continue
		}
		shard, err := pl.shardBlob(tp.name) // zero: no shard, or a folder someone else changed
		if err != nil {
			return nil, nil, err
		}
		if shard.IsZero() {
			rest = append(rest, tp)
			continue
		}
		picked, shards, blobs = append(picked, tp), append(shards, shard), append(blobs, h)
	}
	changed := make([]map[string]bool, len(picked))
	errs := make([]error, len(picked))
	pl.parallel(len(picked), func(i int) { changed[i], errs[i] = pl.changedWorkloads(picked[i], shards[i], blobs[i]) })
	if err := errors.Join(errs...); err != nil {
		return nil, nil, err
	}
	for i, tp := range picked {
		if changed[i] == nil {
			rest = append(rest, tp)
			continue
		}
		tp.byWorkload = changed[i]
		byWorkload = append(byWorkload, tp)
	}
	return rest, byWorkload, nil
}

// changedWorkloads returns the workloads of a cluster type whose key is not the one the
// state recorded (workloads, a blob) with its shard, or nil when the cluster type is to be
// planned by assignment: the keys were not recorded with that shard, a workload came or
// went, one's deployment targets changed (folders to add or remove), or more than a
// quarter of its assignments changed (comparing their digests then renders less).
func (pl *planner) changedWorkloads(tp *typePlan, shard, workloads plumbing.Hash) (map[string]bool, error) {
	data, err := pl.p.tree.Blob(workloads)
	if err != nil {
		return nil, err
	}
	recordedShard, recorded, err := decodeWorkloadKeys(tp.name, data)
	if err != nil {
		pl.logger().Warn("ignoring a state file", "cluster_type", tp.name, "error", err.Error())
		return nil, nil
	}
	if recordedShard != shard || len(recorded) != len(tp.wkeys) {
		return nil, nil
	}
	changed := map[string]bool{}
	targets := map[string]string{} // recorded, of the changed workloads
	n := 0
	var key [32]byte
	for i, k := range tp.wkeys { // both sorted by workload
		r := recorded[i]
		if r.workload != k.Workload {
			return nil, nil
		}
		if string(hex.AppendEncode(key[:0], k.Key[:])) != r.key {
			changed[k.Workload], targets[k.Workload] = true, r.targets
			n += k.Assignments
		}
	}
	if n > len(tp.assigned)/4 {
		return nil, nil
	}
	for wl, t := range render.WorkloadTargets(assignmentsOf(tp.assigned, changed)) {
		if targets[wl] != t {
			return nil, nil
		}
	}
	return changed, nil
}

// assignmentsOf returns the assignments of as whose workload is one of wls (a workload's
// assignments usually follow each other: it is looked up when it changes).
func assignmentsOf(as []*render.Assignment, wls map[string]bool) []*render.Assignment {
	var out []*render.Assignment
	in := false
	for i, a := range as {
		if i == 0 || a.Workload != as[i-1].Workload {
			in = wls[a.Workload]
		}
		if in {
			out = append(out, a)
		}
	}
	return out
}

// writeWorkloadKeys records, with a cluster type's new shard, its workloads' keys, when the
// shard lists exactly its current assignments, all rendered (nothingKept, none failed).
// Otherwise the keys recorded before stay: they name the shard they were recorded with,
// and are trusted only with it.
func (pl *planner) writeWorkloadKeys(tp *typePlan, nothingKept bool) error {
	if !nothingKept || tp.wkeys == nil || slices.ContainsFunc(tp.assigned, failed) {
		return nil
	}
	shard, ok, err := pl.p.tree.File(pl.p.full(ShardDir + "/" + tp.name))
	if err != nil || !ok {
		return err
	}
	return pl.setWorkloadKeys(tp, shard)
}

// setWorkloadKeys writes a cluster type's workload keys, recorded with its shard.
func (pl *planner) setWorkloadKeys(tp *typePlan, shard plumbing.Hash) error {
	return pl.set(WorkloadsDir+"/"+tp.name, encodeWorkloadKeys(shard, tp.wkeys, render.WorkloadTargets(tp.assigned)), nil)
}

// keepWorkloadKeys records the workloads' keys of the cluster types whose folders needed
// nothing (same, unchanged) and for which the state has none (it was written by an earlier
// release): with the index, when it is written (keys alone make no commit).
func (pl *planner) keepWorkloadKeys(tps []*typePlan) error {
	for _, tp := range tps {
		shard, ok := pl.shards[tp.name]
		_, recorded := pl.workloads[tp.name]
		if !ok || recorded || tp.wkeys == nil || slices.ContainsFunc(tp.assigned, failed) {
			continue
		}
		if err := pl.setWorkloadKeys(tp, shard); err != nil {
			return err
		}
	}
	return nil
}
