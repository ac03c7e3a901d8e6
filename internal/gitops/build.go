package gitops

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"math"
	"runtime"
	"slices"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"golang.org/x/sync/errgroup"

	"github.com/fleetform/fleetform/internal/controlplane"
	"github.com/fleetform/fleetform/internal/gitops/gitrepo"
	"github.com/fleetform/fleetform/internal/render"
)

// actionDelete is the Change.Action of a removed file; the tree's gitrepo.Action names
// the others (add, modify).
const actionDelete = "delete"

// errStopped ends a plan whose render was stopped: its output is incomplete.
var errStopped = errors.New("stopped while rendering")

// typePlan is the work on one cluster type's folder.
type typePlan struct {
	name     string
	assigned []*render.Assignment // its current assignments, by deployment target
	changed  bool                 // anything to do at all
	// rec is what the state says was rendered (its shard; none to trust: unknown) and the
	// keys it recorded with it.
	rec recorded
	// key is the render.Renderer.TypeKey of its inputs ("" when there is none); same is set
	// when the state records that key for the folder as it is: nothing to prepare or write.
	key  string
	same bool
	// akeys are the assignments' keys (render.Renderer.AssignmentKey), in order, when the
	// cluster type is not the same.
	akeys     []string
	shardRead bool // rec holds the shard as read (or there is none to trust)
	// wkeys are its workloads' keys (render.Renderer.TypeKeys; nil: no key).
	wkeys []render.WorkloadKey
	// byWorkload is set for a cluster type planned by workload (planByWorkload): only the
	// assignments of the workloads it holds are composed and rendered.
	byWorkload map[string]bool
	// shard is the shard its current digests make, in order, when unchanged built it
	// (nil otherwise): written as it is when every assignment renders and none is kept.
	shard []byte
}

// build computes every input digest, renders only what changed and edits the tree. It
// renders one cluster type at a time and writes its files into the tree (and the pack)
// before rendering the next, so that only one cluster type's rendered files are in memory.
func (pl *planner) build(in Input) error {
	p := pl.p
	rr := render.NewRenderer(in.Snapshot, in.Schedule, render.Options{Workers: pl.opts.Workers, Progress: pl.opts.Progress, Stop: pl.stop})
	out := rr.Output()
	p.Output = out
	types := groupByType(out)
	if err := pl.prepare(rr, out.ClusterTypes, types); err != nil {
		return err
	}
	if err := pl.classify(out.ClusterTypes, types); err != nil {
		return err
	}
	pl.logger().Debug("rendering", "environment", p.Environment, "assignments", len(out.Assignments))
	owned, err := pl.ownedClusterTypes(out.ClusterTypes)
	if err != nil {
		return err
	}
	next := newIndex(p.Environment)
	next.common = out.CommonCommit
	hasErrors := controlplane.HasErrors(in.Snapshot.Diagnostics) || len(in.Schedule.FailedPolicies) > 0
	affected := map[string]bool{}
	previousTargets := 0 // the deployment-target folders owned before this apply
	pl.reserve(out.ClusterTypes, types)
	ahead, err := pl.newRenderAhead(rr, out.ClusterTypes, types)
	if err != nil {
		return err
	}
	defer ahead.drain()
	var kept []*typePlan // the cluster types that need nothing
	for _, ct := range out.ClusterTypes {
		tp := types[ct]
		if !tp.changed {
			kept = append(kept, tp)
			rr.RenderBatch(tp.assigned, func(int) bool { return false }) // counted as done
			p.Skipped += len(tp.assigned)
			entry := pl.index.types[ct]
			entry.key = tp.key
			next.types[ct] = entry
			previousTargets += entry.targets
			continue
		}
		if !ahead.next() {
			return errStopped
		}
		entry, had, err := pl.writeType(tp, hasErrors, affected)
		if err != nil {
			return err
		}
		tp.rec.drop() // written: its shard is not needed any more
		if !slices.ContainsFunc(tp.assigned, failed) {
			entry.key = tp.key
		}
		next.types[ct] = entry
		previousTargets += had
	}
	if p.Output = rr.Finish(); p.Output.Stopped {
		return errStopped
	}
	removed, err := pl.removeLostTypes(owned, types, next, hasErrors, affected)
	if err != nil {
		return err
	}
	previousTargets += removed
	if err := pl.writePromotedCommit(p.Output.PromotedCommit); err != nil {
		return err
	}
	pl.log.into(p)
	pl.checkMassDelete(previousTargets, len(owned))
	p.ClusterTypesAffected = sortedSet(affected)
	written, err := pl.writeIndex(next)
	if err != nil || !written || pl.planOnly {
		return err
	}
	return pl.keepWorkloadKeys(kept)
}

// changeLog records the plan's changes while it is built, when no diff is asked for: their
// paths go into one buffer, with no pointer for the collector to scan and no string per
// file (3,000,000 of them for a million-assignment cold apply), and become the plan's
// Changes, slices of one string, once it is complete. Each path is kept as what it does not
// share with the one before (a file's folder is written once for its three files): 70 MB
// instead of 190 MB for that apply, which is room the collector has under the memory limit.
type changeLog struct {
	suffixes []byte
	marks    []changeMark
	last     []byte // the path added last
	next     []byte // where the path being added is put together
	size     int    // of the paths in all
}

type changeMark struct {
	shared, suffix uint32 // the bytes the path shares with the one before, and the rest's
	action         uint8
}

var changeActions = []string{string(gitrepo.Added), string(gitrepo.Modified), actionDelete}

func (l *changeLog) add(path, action string) { l.addIn("", path, action) }

// addIn records the change of the file name in the folder dir ("": name is the path).
func (l *changeLog) addIn(dir, name, action string) {
	p := l.next[:0]
	if dir != "" {
		p = append(append(p, dir...), '/')
	}
	p = append(p, name...)
	shared := 0
	for limit := min(len(p), len(l.last), math.MaxUint32); shared < limit && p[shared] == l.last[shared]; {
		shared++
	}
	l.suffixes = append(l.suffixes, p[shared:]...)
	l.marks = append(l.marks, changeMark{shared: uint32(shared), suffix: uint32(len(p) - shared), //nolint:gosec // a path is far shorter than 4 GiB
		action: uint8(slices.Index(changeActions, action))}) //nolint:gosec // one of three
	l.last, l.next = p, l.last
	l.size += len(p)
}

// into appends the changes recorded to p.Changes.
func (l *changeLog) into(p *Plan) {
	if len(l.marks) == 0 {
		return
	}
	var b strings.Builder
	b.Grow(l.size)
	p.Changes = slices.Grow(p.Changes, len(l.marks))
	start, prev := 0, ""
	for _, m := range l.marks {
		b.WriteString(prev[:m.shared])
		b.Write(l.suffixes[:m.suffix])
		l.suffixes = l.suffixes[m.suffix:]
		prev = b.String()[start:]
		p.Changes = append(p.Changes, Change{Path: prev, Action: changeActions[m.action]})
		start = b.Len()
	}
	*l = changeLog{}
}

// renderAhead renders the changed cluster types in order, the next one while the current
// one is written: writing is sequential, and would leave the other cores idle. It also
// reads ahead the folder each has in the repository (10,000 entries for a cluster type of
// a million-assignment fleet), which the writer would otherwise read itself.
type renderAhead struct {
	rr       *render.Renderer
	tree     tree
	changed  []*typePlan
	folders  []plumbing.Hash // changed[i]'s folder as the branch has it (zero: none)
	rendered []chan bool     // a render started and not waited for
	k        int             // changed[k] is the next to wait for
}

func (pl *planner) newRenderAhead(rr *render.Renderer, cts []string, types map[string]*typePlan) (*renderAhead, error) {
	a := &renderAhead{rr: rr, tree: pl.p.tree}
	for _, ct := range cts {
		if tp := types[ct]; tp.changed {
			h, err := pl.p.tree.DirHash(pl.p.full(ct))
			if err != nil {
				return nil, err
			}
			a.changed, a.folders = append(a.changed, tp), append(a.folders, h)
		}
	}
	a.rendered = make([]chan bool, len(a.changed))
	return a, nil
}

func (a *renderAhead) start(i int) {
	if i < len(a.changed) && a.rendered[i] == nil {
		ch := make(chan bool, 1)
		a.rendered[i] = ch
		tp, folder := a.changed[i], a.folders[i]
		go func() {
			a.tree.ReadAhead(folder)
			ch <- a.rr.RenderBatch(tp.assigned, tp.needsRender)
		}()
	}
}

// next waits for the next changed cluster type's render (starting the one after it) and
// reports false when the work was stopped.
func (a *renderAhead) next() bool {
	a.start(a.k)
	a.start(a.k + 1)
	ok := <-a.rendered[a.k]
	a.rendered[a.k] = nil
	a.k++
	return ok
}

// drain waits for the renders started and not waited for (a plan stopped or failed part way).
func (a *renderAhead) drain() {
	for _, ch := range a.rendered {
		if ch != nil {
			<-ch
		}
	}
}

// needsRender says whether a changed cluster type's i-th assignment must be rendered: its
// inputs are not those its shard records (or there is no shard to trust).
func (tp *typePlan) needsRender(i int) bool {
	a := tp.assigned[i]
	if tp.byWorkload != nil {
		return tp.byWorkload[a.Workload]
	}
	e, ok := tp.rec.entry(i, a)
	return !tp.rec.trusted() || !ok || e.digest != a.InputDigest
}

// reserve sizes the plan's lists for the assignments to be rendered (three files each), so
// that a million-assignment cold apply does not grow them by doubling: the copies and the
// unused half were a few hundred MB.
func (pl *planner) reserve(cts []string, types map[string]*typePlan) {
	n := 0
	for _, ct := range cts {
		if tp := types[ct]; tp.changed {
			for i, a := range tp.assigned {
				if a.Err == nil && tp.needsRender(i) {
					n++
				}
			}
		}
	}
	p := pl.p
	p.tree.Reserve(4*n + 2*len(cts) + 16) // three files and a folder each, the cluster types and the state
	if pl.opts.Diff {
		p.Changes = slices.Grow(p.Changes, 3*n+len(cts)+2)
	} else {
		pl.log.marks = slices.Grow(pl.log.marks, 3*n+len(cts)+2)
		pl.log.suffixes = slices.Grow(pl.log.suffixes, 3*n*24)
	}
	if pl.index == nil {
		p.AssignmentsAdded = slices.Grow(p.AssignmentsAdded, n)
	}
}

// groupByType lists each cluster type's assignments.
func groupByType(out *render.Output) map[string]*typePlan {
	types := make(map[string]*typePlan, len(out.ClusterTypes))
	for _, ct := range out.ClusterTypes {
		types[ct] = &typePlan{name: ct}
	}
	for i := range out.Assignments {
		a := &out.Assignments[i]
		types[a.ClusterType].assigned = append(types[a.ClusterType].assigned, a)
	}
	return types
}

func failed(a *render.Assignment) bool { return a.Err != nil }

// prepare computes every cluster type's key, marks the ones the state records with that
// key (their folders as fleetform wrote them), and composes and digests the assignments of
// the others, except those whose own key is the one the state recorded with their digest:
// with nothing changed, no assignment is composed; with one workload changed, only its.
func (pl *planner) prepare(rr *render.Renderer, cts []string, types map[string]*typePlan) error {
	pl.parallel(len(cts), func(i int) { tp := types[cts[i]]; tp.key, tp.wkeys = rr.TypeKeys(tp.name, tp.assigned) })
	var others []*typePlan
	for _, ct := range cts {
		tp := types[ct]
		same, err := pl.sameKey(tp)
		if err != nil {
			return err
		}
		if tp.same = same; !same {
			others = append(others, tp)
		}
	}
	others, byWorkload, err := pl.planByWorkload(others)
	if err != nil {
		return err
	}
	if err := pl.readAllRecorded(others); err != nil {
		return err
	}
	pl.parallel(len(others), func(i int) { others[i].akeys = rr.AssignmentKeys(others[i].name, others[i].assigned) })
	var todo []*render.Assignment
	for _, tp := range others {
		for j, a := range tp.assigned {
			if tp.akeys == nil {
				todo = append(todo, a)
				continue
			}
			if k := tp.akeys[j]; tp.rec.key(j, a) == k {
				if e, ok := tp.rec.entry(j, a); ok && e.digest != "" {
					a.InputDigest = e.digest // its inputs are those that digest was computed from
					continue
				}
			}
			todo = append(todo, a)
		}
	}
	for _, tp := range byWorkload {
		todo = append(todo, assignmentsOf(tp.assigned, tp.byWorkload)...)
	}
	rr.PrepareBatch(todo)
	pl.p.Composed = len(todo)
	return nil
}

// readAllRecorded reads what the state recorded for each of the cluster types that are not
// the same, when it recorded their assignments' keys: the shard and the keys, on every
// core (with a change to one workload, that is every cluster type's).
func (pl *planner) readAllRecorded(tps []*typePlan) error {
	blobs := make([]recordedBlobs, len(tps))
	for i, tp := range tps { // the tree is walked here, in one goroutine
		var err error
		if blobs[i], err = pl.recordedBlobs(tp); err != nil {
			return err
		}
	}
	errs := make([]error, len(tps))
	pl.parallel(len(tps), func(i int) { errs[i] = pl.readRecorded(tps[i], blobs[i]) })
	return errors.Join(errs...)
}

// recordedBlobs are the state files readRecorded reads for a cluster type: its shard
// (zero when there is none to trust) and its keys (zero: none).
type recordedBlobs struct {
	shard, keys plumbing.Hash
}

// recordedBlobs finds the shard and keys the state records for a cluster type whose folder
// is as the state says fleetform wrote it.
func (pl *planner) recordedBlobs(tp *typePlan) (recordedBlobs, error) {
	h, ok := pl.keys[tp.name]
	if pl.index == nil || !ok {
		return recordedBlobs{}, nil
	}
	shard, err := pl.shardBlob(tp.name)
	return recordedBlobs{shard: shard, keys: h}, err
}

// readRecorded reads the shard and the keys the state records for a cluster type (tp.rec),
// whose blobs recordedBlobs found. It reads the repository only, so that it can run for
// several cluster types at once.
func (pl *planner) readRecorded(tp *typePlan, b recordedBlobs) error {
	if b.keys.IsZero() {
		return nil
	}
	if b.shard.IsZero() {
		tp.shardRead = true
		return nil
	}
	if err := pl.readShardInto(tp, b.shard); err != nil || !tp.rec.trusted() {
		tp.shardRead = err == nil
		return err
	}
	tp.shardRead = true
	data, err := pl.p.tree.Blob(b.keys)
	if err != nil {
		return err
	}
	if err := tp.rec.setKeys(tp.name, data, tp.assigned); err != nil {
		pl.logger().Warn("ignoring a state file", "cluster_type", tp.name, "error", err.Error())
		tp.rec.keysAt, tp.rec.keysByName = nil, nil
	}
	return nil
}

// readShardInto reads and decodes a cluster type's shard blob into tp.rec (none to trust,
// with a warning, when it is not a shard).
func (pl *planner) readShardInto(tp *typePlan, h plumbing.Hash) error {
	data, err := pl.p.tree.Blob(h)
	if err != nil {
		return err
	}
	if err := tp.rec.setShard(tp.name, data, tp.assigned); err != nil {
		pl.logger().Warn("ignoring a state shard", "cluster_type", tp.name, "error", err.Error())
		tp.rec.drop()
	}
	return nil
}

// parallel calls fn(0) .. fn(n-1) on the plan's workers.
func (pl *planner) parallel(n int, fn func(int)) {
	var g errgroup.Group
	g.SetLimit(cmp.Or(max(pl.opts.Workers, 0), runtime.GOMAXPROCS(0)))
	for i := range n {
		g.Go(func() error { fn(i); return nil })
	}
	_ = g.Wait() // fn returns no error
}

// sameKey reports whether the state records tp's key for its folder as it is now.
func (pl *planner) sameKey(tp *typePlan) (bool, error) {
	if pl.index == nil || tp.key == "" {
		return false, nil
	}
	recorded, ok := pl.index.types[tp.name]
	if _, hasShard := pl.shards[tp.name]; !ok || !hasShard || recorded.key != tp.key {
		return false, nil
	}
	tree, err := pl.p.tree.DirHash(pl.p.full(tp.name))
	return err == nil && tree == recorded.tree, err
}

// classify finds the cluster types with something to do: no state, a folder someone else
// changed, or a shard that differs from the one the current digests make.
func (pl *planner) classify(cts []string, types map[string]*typePlan) error {
	for _, ct := range cts {
		tp := types[ct]
		if tp.same {
			continue
		}
		if tp.byWorkload != nil {
			tp.changed = len(tp.byWorkload) > 0
			continue
		}
		same, err := pl.unchanged(tp)
		if err != nil {
			return err
		}
		if same {
			continue
		}
		tp.changed = true
		if !tp.shardRead {
			h, err := pl.shardBlob(ct)
			if err != nil {
				return err
			}
			if !h.IsZero() {
				if err := pl.readShardInto(tp, h); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// shardLineSize is a generous size of one shard line (target, digest, workload), to size
// the buffer a shard is built in once.
const shardLineSize = 160

// unchanged reports whether a cluster type's folder is exactly as its current inputs would
// render it: same shard, and the folder as fleetform last wrote it.
func (pl *planner) unchanged(tp *typePlan) (bool, error) {
	if pl.index == nil {
		return false, nil
	}
	recorded, ok := pl.index.types[tp.name]
	shardBlob, hasShard := pl.shards[tp.name]
	failing := slices.ContainsFunc(tp.assigned, failed)
	if !ok || !hasShard || failing { // a failing assignment: look again, and report it
		return false, nil
	}
	if tp.rec.at != nil { // that shard, read by position: compared without encoding the new one
		if !tp.rec.lists(tp.assigned) {
			return false, nil
		}
		tree, err := pl.p.tree.DirHash(pl.p.full(tp.name))
		return err == nil && tree == recorded.tree, err
	}
	b := make([]byte, 0, shardLineSize*len(tp.assigned))
	sorted := true
	for i, a := range tp.assigned {
		b = shardLine(b, a.DeploymentTarget, shardEntry{digest: a.InputDigest, workload: a.Workload})
		sorted = sorted && (i == 0 || tp.assigned[i-1].DeploymentTarget < a.DeploymentTarget)
	}
	if gitrepo.BlobHash(b) != shardBlob {
		if sorted {
			tp.shard = b // the new shard, if every assignment renders (writeType)
		}
		return false, nil
	}
	tree, err := pl.p.tree.DirHash(pl.p.full(tp.name))
	return err == nil && tree == recorded.tree, err
}

// readShard reads a cluster type's shard, or nil when there is none to trust (no state,
// or a folder someone else changed: then every assignment is rendered and compared).
func (pl *planner) readShard(ct string) (shard, error) {
	h, err := pl.shardBlob(ct)
	if err != nil || h.IsZero() {
		return nil, err
	}
	return pl.decodeShardBlob(ct, h)
}

// shardBlob is the blob of a cluster type's shard when the state records one and the
// folder is as the state says fleetform wrote it (zero otherwise).
func (pl *planner) shardBlob(ct string) (plumbing.Hash, error) {
	if pl.index == nil {
		return plumbing.ZeroHash, nil
	}
	recorded, ok := pl.index.types[ct]
	h, hasShard := pl.shards[ct]
	if !ok || !hasShard {
		return plumbing.ZeroHash, nil
	}
	if tree, err := pl.p.tree.DirHash(pl.p.full(ct)); err != nil || tree != recorded.tree {
		return plumbing.ZeroHash, err
	}
	return h, nil
}

// decodeShardBlob reads and decodes a shard (nil, with a warning, when it is not one).
func (pl *planner) decodeShardBlob(ct string, h plumbing.Hash) (shard, error) {
	data, err := pl.p.tree.Blob(h)
	if err != nil {
		return nil, err
	}
	s, err := decodeShard(ct, data)
	if err != nil {
		pl.logger().Warn("ignoring a state shard", "cluster_type", ct, "error", err.Error())
		return nil, nil
	}
	return s, nil
}

// writeType brings one changed cluster type's folder up to date and returns its index entry
// and how many deployment-target folders it had before.
func (pl *planner) writeType(tp *typePlan, hasErrors bool, affected map[string]bool) (indexEntry, int, error) {
	p := pl.p
	if err := pl.set(tp.name+"/"+render.ReadmeFile, []byte(render.ReadmeText), affected); err != nil {
		return indexEntry{}, 0, err
	}
	if tp.inPlace() {
		return pl.writeInPlace(tp, affected)
	}
	previous, err := pl.previousTargets(tp)
	if err != nil {
		return indexEntry{}, 0, err
	}
	next := shard{}
	current := map[string]bool{}
	for _, a := range tp.assigned {
		current[a.DeploymentTarget] = true
		old, had := previous[a.DeploymentTarget]
		switch {
		case a.Err != nil:
			p.Failed = append(p.Failed, FailedAssignment{AssignmentRef: refOf(a.Assignment), Error: a.Err.Error()})
			if had && old.digest != "" {
				next[a.DeploymentTarget] = old // rendered again once it works
			}
			continue
		case a.Files != nil:
			p.Rendered++
			if _, err := pl.replaceDir(a.Dir(), a.Files, affected); err != nil {
				return indexEntry{}, 0, err
			}
			a.Files = nil // in the tree and its pack now: not kept twice (Rendered counts it)
		default:
			p.Skipped++
		}
		if !had {
			p.AssignmentsAdded = append(p.AssignmentsAdded, refOf(a.Assignment))
		}
		next[a.DeploymentTarget] = shardEntry{digest: a.InputDigest, workload: a.Workload}
	}
	if err := pl.removeGone(tp.name, previous, current, next, hasErrors, affected); err != nil {
		return indexEntry{}, 0, err
	}
	// nothingKept: the shard lists exactly the current assignments, in their order, so that
	// it and the keys can be written as they were built, without a map or a sort.
	nothingKept := len(next) == len(tp.assigned) && !slices.ContainsFunc(tp.assigned, failed)
	shardData := tp.shard
	if shardData == nil || !nothingKept {
		shardData = next.encode() // entries kept for failed or deferred targets
	}
	tp.shard = nil
	return pl.writeTypeState(tp, shardData, next, nothingKept, len(previous))
}

// inPlace reports whether a changed cluster type, rendered, keeps exactly the deployment
// targets its shard lists, in their order, none failed, each with a key: writeInPlace then
// writes it by position, without a map of either list.
func (tp *typePlan) inPlace() bool {
	return (tp.byWorkload != nil || tp.rec.at != nil && tp.akeys != nil) && !slices.ContainsFunc(tp.assigned, failed)
}

// writeInPlace is writeType for a cluster type whose folder is written in place (inPlace):
// the folders of the assignments rendered are replaced, the others stay as they are.
func (pl *planner) writeInPlace(tp *typePlan, affected map[string]bool) (indexEntry, int, error) {
	p := pl.p
	for _, a := range tp.assigned {
		if a.Files == nil {
			p.Skipped++
			continue
		}
		changed, err := pl.replaceDir(a.Dir(), a.Files, affected)
		if err != nil {
			return indexEntry{}, 0, err
		}
		a.Files = nil // in the tree and its pack now: not kept twice (Rendered counts it)
		// Planned by workload, every assignment of a changed workload is rendered; one
		// whose files are as they were is counted unchanged (an apply counts it so when its
		// digest is the one recorded, as it most often is).
		if tp.byWorkload != nil && !changed {
			p.Skipped++
			continue
		}
		p.Rendered++
	}
	if pl.planOnly && !tp.rec.lists(tp.assigned) {
		return pl.skipTypeState(tp), len(tp.assigned), nil
	}
	shardData := tp.shard
	if shardData == nil {
		shardData = make([]byte, 0, shardLineSize*len(tp.assigned))
		for _, a := range tp.assigned {
			shardData = shardLine(shardData, a.DeploymentTarget, shardEntry{digest: a.InputDigest, workload: a.Workload})
		}
	}
	tp.shard = nil
	return pl.writeTypeState(tp, shardData, nil, true, len(tp.assigned))
}

// skipTypeState stands for writeTypeState in a plan that is only shown, for a cluster type
// written in place whose digests are not those its shard records: its shard changes, so the
// state does, and that is all the plan reports of it. Its new shard, keys and folder's tree
// are not made (most of what such a plan would write), and its folder is dropped from
// memory: its index entry names no tree.
func (pl *planner) skipTypeState(tp *typePlan) indexEntry {
	pl.p.StateChanged = true
	tp.shard, tp.akeys = nil, nil
	pl.p.tree.Forget(pl.p.full(tp.name))
	return indexEntry{targets: len(tp.assigned)}
}

// writeTypeState writes a cluster type's shard and keys, then its folder's tree, and
// returns its index entry and had (how many deployment-target folders it had before). next
// is its new shard, nil when it lists exactly the current assignments (nothingKept).
func (pl *planner) writeTypeState(tp *typePlan, shardData []byte, next shard, nothingKept bool, had int) (indexEntry, int, error) {
	if err := pl.set(ShardDir+"/"+tp.name, shardData, nil); err != nil {
		return indexEntry{}, 0, err
	}
	if err := pl.writeKeys(tp, next, nothingKept); err != nil {
		return indexEntry{}, 0, err
	}
	if err := pl.writeWorkloadKeys(tp, nothingKept); err != nil {
		return indexEntry{}, 0, err
	}
	tree, err := pl.writeFolder(tp.name)
	if err == nil {
		pl.p.tree.Release(pl.p.full(tp.name)) // done with it: a million assignments' folders are not kept
	}
	targets := len(next)
	if next == nil {
		targets = len(tp.assigned)
	}
	return indexEntry{tree: tree, targets: targets}, had, err
}

// removeGone removes the folders of a cluster type's targets that the state lists and that
// are not assigned any more (current), or keeps them in its next shard, deferred, when the
// control plane has errors.
func (pl *planner) removeGone(ct string, previous shard, current map[string]bool, next shard, hasErrors bool, affected map[string]bool) error {
	p := pl.p
	var gone []string // sorted below: only the removed targets, not the whole shard
	for dt := range previous {
		if !current[dt] {
			gone = append(gone, dt)
		}
	}
	slices.Sort(gone)
	for _, dt := range gone {
		dir := ct + "/" + dt
		if hasErrors {
			p.Deferred = append(p.Deferred, dir)
			next[dt] = previous[dt]
			continue
		}
		if err := pl.remove(dir, affected); err != nil {
			return err
		}
		p.AssignmentsRemoved = append(p.AssignmentsRemoved, pl.ref(ct, dt, previous[dt]))
	}
	return nil
}

// writeKeys records, with a cluster type's new shard, the key of each assignment it lists:
// the current key of those prepared or reused now, the recorded one of those kept (failed
// or deferred). When one is unknown, the cluster type's keys are removed, so that nothing
// is reused from them.
func (pl *planner) writeKeys(tp *typePlan, next shard, nothingKept bool) error {
	if tp.akeys != nil && nothingKept {
		if data, ok := keysInOrder(tp); ok { // the usual case, written without a map
			tp.akeys = nil
			return pl.set(KeysDir+"/"+tp.name, data, nil)
		}
	}
	keys := make(assignmentKeys, len(next))
	for i, a := range tp.assigned {
		if a.Err == nil && tp.akeys != nil && tp.akeys[i] != "" {
			keys[a.DeploymentTarget] = tp.akeys[i]
		}
	}
	old := tp.rec.keys(tp.assigned)
	tp.akeys = nil
	for dt := range next {
		if _, ok := keys[dt]; ok {
			continue
		}
		if keys[dt] = old[dt]; keys[dt] == "" {
			return pl.remove(KeysDir+"/"+tp.name, nil)
		}
	}
	return pl.set(KeysDir+"/"+tp.name, keys.encode(), nil)
}

// keysInOrder encodes the keys of a cluster type's assignments as assignmentKeys.encode
// does, when they are sorted by deployment target (as the schedule makes them).
func keysInOrder(tp *typePlan) ([]byte, bool) {
	b := make([]byte, 0, len(tp.assigned)*64)
	for i, a := range tp.assigned {
		if i > 0 && tp.assigned[i-1].DeploymentTarget >= a.DeploymentTarget {
			return nil, false
		}
		b = keysLine(b, a.DeploymentTarget, tp.akeys[i])
	}
	return b, true
}

// previousTargets returns the deployment targets the folder has: the shard's, or, without
// a shard to trust, the sub-folders actually there; none in a folder fleetform (or Kalypso)
// never wrote (a new cluster type named like someone's folder), whose sub-folders are not
// fleetform's to remove.
func (pl *planner) previousTargets(tp *typePlan) (shard, error) {
	if s := tp.rec.shard(tp.assigned); s != nil {
		return s, nil
	}
	if wrote, err := pl.wroteType(tp.name); err != nil || !wrote {
		return shard{}, err
	}
	_, dirs, err := pl.p.tree.List(pl.p.full(tp.name))
	if err != nil {
		return nil, err
	}
	out := shard{}
	for _, d := range dirs {
		out[d] = shardEntry{}
	}
	return out, nil
}

func (pl *planner) ref(ct, dt string, e shardEntry) AssignmentRef {
	ns := ""
	if e.digest != "" {
		ns = namespaceOf(pl.p.Environment, ct, dt)
	}
	return AssignmentRef{Workload: e.workload, DeploymentTarget: dt, ClusterType: ct, Namespace: ns}
}

// writeFolder writes a cluster-type folder's tree (into the plan's pack) and returns it.
func (pl *planner) writeFolder(ct string) (plumbing.Hash, error) {
	return pl.p.tree.WriteDir(pl.p.full(ct))
}

// removeLostTypes removes the folders (and shards) of cluster types that are gone, unless
// the control plane has errors. It returns how many deployment-target folders they held.
func (pl *planner) removeLostTypes(owned map[string]bool, current map[string]*typePlan, next *index, hasErrors bool, affected map[string]bool) (int, error) {
	p := pl.p
	total := 0
	for _, ct := range sortedSet(owned) {
		if _, ok := current[ct]; ok {
			continue
		}
		old, err := pl.readShard(ct)
		if err != nil {
			return 0, err
		}
		if old == nil {
			if old, err = pl.previousTargets(&typePlan{name: ct}); err != nil {
				return 0, err
			}
		}
		total += len(old)
		if hasErrors {
			p.Deferred = append(p.Deferred, ct)
			if e, ok := pl.index.lookup(ct); ok {
				next.types[ct] = e
			}
			continue
		}
		for _, dt := range slices.Sorted(maps.Keys(old)) {
			p.AssignmentsRemoved = append(p.AssignmentsRemoved, pl.ref(ct, dt, old[dt]))
		}
		if err := pl.remove(ct, affected); err != nil {
			return 0, err
		}
		if err := pl.remove(ShardDir+"/"+ct, nil); err != nil {
			return 0, err
		}
		if err := pl.remove(KeysDir+"/"+ct, nil); err != nil {
			return 0, err
		}
		if err := pl.remove(WorkloadsDir+"/"+ct, nil); err != nil {
			return 0, err
		}
	}
	return total, nil
}

func (x *index) lookup(ct string) (indexEntry, bool) {
	if x == nil {
		return indexEntry{}, false
	}
	e, ok := x.types[ct]
	return e, ok
}

// replaceDir makes a deployment target's folder hold exactly the rendered files, and
// reports whether that changed anything.
func (pl *planner) replaceDir(dir string, f *render.Files, affected map[string]bool) (changed bool, err error) {
	var buf [4]gitrepo.File
	want := buf[:0] // no map per folder: at most four files (the plan's changes are sorted at the end)
	f.Each(func(name string, content []byte) { want = append(want, gitrepo.File{Name: name, Content: content}) })
	full := pl.p.full(dir)
	files, dirs, err := pl.p.tree.List(full)
	if err != nil {
		return false, err
	}
	for _, name := range files {
		if f.KeepConfig && (name == render.ConfigYAMLFile || name == render.ConfigShFile) {
			continue // waiting for platform configuration: the last valid one stays
		}
		if !slices.ContainsFunc(want, func(w gitrepo.File) bool { return w.Name == name }) {
			if err := pl.remove(dir+"/"+name, affected); err != nil {
				return false, err
			}
			changed = true
		}
	}
	for _, name := range dirs {
		if err := pl.remove(dir+"/"+name, affected); err != nil {
			return false, err
		}
		changed = true
	}
	var changes [len(buf)]gitrepo.FileChange
	if err := pl.p.tree.SetFiles(full, want, changes[:len(want)]); err != nil {
		return false, err
	}
	for i, c := range changes[:len(want)] {
		if err := pl.changed(dir, want[i].Name, want[i].Content, c, affected); err != nil {
			return false, err
		}
		changed = changed || c.Action != gitrepo.Unchanged
	}
	return changed, nil
}

// set writes a file (path relative to the GitOps path) and records the change; files under
// StateDir are fleetform's own and are not reported.
func (pl *planner) set(rel string, content []byte, affected map[string]bool) error {
	action, old, err := pl.p.tree.SetFile(pl.p.full(rel), content)
	if err != nil {
		return err
	}
	return pl.changed("", rel, content, gitrepo.FileChange{Action: action, Old: old}, affected)
}

// changed records what writing the file name of the folder dir ("": name is the path
// relative to the GitOps path) changed; files under StateDir are fleetform's own and are
// not reported.
func (pl *planner) changed(dir, name string, content []byte, c gitrepo.FileChange, affected map[string]bool) error {
	if c.Action == gitrepo.Unchanged {
		return nil
	}
	p := pl.p
	if under(dir, name, StateDir) {
		p.StateChanged = true
		return nil
	}
	if dir == "" {
		markAffected(affected, name)
	} else {
		markAffected(affected, dir)
	}
	if !pl.opts.Diff {
		pl.log.addIn(dir, name, string(c.Action))
		return nil
	}
	rel := name
	if dir != "" {
		rel = dir + "/" + name
	}
	change := Change{Path: rel, Action: string(c.Action), New: content}
	if c.Action == gitrepo.Modified {
		var err error
		if change.Old, err = p.tree.Blob(c.Old); err != nil {
			return err
		}
	}
	p.Changes = append(p.Changes, change)
	return nil
}

// under reports whether the path dir/name ("": name) is below the folder top.
func under(dir, name, top string) bool {
	if dir == "" {
		return strings.HasPrefix(name, top+"/")
	}
	return dir == top || strings.HasPrefix(dir, top+"/")
}

// remove deletes a file or folder (relative to the GitOps path) and records each file.
func (pl *planner) remove(rel string, affected map[string]bool) error {
	p := pl.p
	removed, err := p.tree.Remove(p.full(rel))
	if err != nil || len(removed) == 0 {
		return err
	}
	if strings.HasPrefix(rel, StateDir+"/") {
		p.StateChanged = true
		return nil
	}
	for _, full := range slices.Sorted(maps.Keys(removed)) {
		c := Change{Path: strings.TrimPrefix(full, p.full("")), Action: actionDelete}
		if !pl.opts.Diff {
			pl.log.add(c.Path, c.Action)
			continue
		}
		if c.Old, err = p.tree.Blob(removed[full]); err != nil {
			return err
		}
		p.Changes = append(p.Changes, c)
	}
	markAffected(affected, rel)
	return nil
}

func markAffected(affected map[string]bool, rel string) {
	if affected == nil {
		return
	}
	ct, _, _ := strings.Cut(rel, "/")
	if !strings.HasPrefix(ct, ".") {
		affected[ct] = true
	}
}

// checkMassDelete flags a plan that removes more than the threshold of the owned
// deployment-target folders (or of the owned cluster-type folders).
func (pl *planner) checkMassDelete(ownedTargets, ownedTypes int) {
	p := pl.p
	threshold := pl.opts.MassDeleteThreshold
	if threshold <= 0 {
		threshold = 0.5
	}
	removedTypes := 0
	for _, c := range p.Changes {
		if c.Action == actionDelete && strings.Count(c.Path, "/") == 1 && strings.HasSuffix(c.Path, "/"+render.ReadmeFile) {
			removedTypes++
		}
	}
	removed, owned := len(p.AssignmentsRemoved), ownedTargets
	if ownedTypes > 0 && removedTypes*max(owned, 1) > removed*ownedTypes {
		removed, owned = removedTypes, ownedTypes
	}
	if removed > 0 && float64(removed) > threshold*float64(owned) {
		p.MassDelete = &MassDelete{Removed: removed, Owned: owned, Threshold: threshold}
	}
}

// writeIndex records the new index when it differs.
// writePromotedCommit writes the pinned commit into PromotedCommitFile, or removes the file
// when nothing is pinned (the environment follows the tip; a file left from an earlier pin
// would say a promotion happened that no longer holds).
func (pl *planner) writePromotedCommit(commit string) error {
	if commit == "" {
		return pl.remove(render.PromotedCommitFile, nil)
	}
	return pl.set(render.PromotedCommitFile, []byte(commit), nil)
}

// writeIndex records the new index when it differs. Keys that changed alone (an edit of
// the control plane that changes no file) make no commit: they are recorded with the next
// change.
func (pl *planner) writeIndex(next *index) (written bool, err error) {
	data := next.encode()
	if pl.index != nil && !pl.p.StateChanged && (string(data) == string(pl.index.encode()) ||
		len(pl.p.Changes) == 0 && string(next.encodeKeys(false)) == string(pl.index.encodeKeys(false))) {
		return false, nil
	}
	return true, pl.set(IndexFile, data, nil)
}

// wroteType reports whether the cluster-type folder ct is one fleetform wrote: its state
// records it, or, without a state (a repository Kalypso wrote), it holds the cluster-type
// README.
func (pl *planner) wroteType(ct string) (bool, error) {
	if pl.index != nil {
		_, ok := pl.index.types[ct]
		return ok, nil
	}
	h, ok, err := pl.p.tree.File(pl.p.full(ct + "/" + render.ReadmeFile))
	if err != nil {
		return false, fmt.Errorf("read %s: %w", ct, err)
	}
	return ok && h == gitrepo.BlobHash([]byte(render.ReadmeText)), nil
}

// ownedClusterTypes returns the cluster-type folders fleetform owns: the ones it renders,
// the ones its state records, and, when there is no state (a repository Kalypso wrote),
// every folder holding Kalypso's cluster-type README.
func (pl *planner) ownedClusterTypes(current []string) (map[string]bool, error) {
	owned := map[string]bool{}
	for _, ct := range current {
		owned[ct] = true
	}
	if pl.index != nil {
		for ct := range pl.index.types {
			owned[ct] = true
		}
		return owned, nil
	}
	_, dirs, err := pl.p.tree.List(pl.p.base)
	if err != nil {
		return nil, err
	}
	readme := gitrepo.BlobHash([]byte(render.ReadmeText))
	for _, d := range dirs {
		if strings.HasPrefix(d, ".") {
			continue
		}
		h, ok, err := pl.p.tree.File(pl.p.full(d + "/" + render.ReadmeFile))
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", d, err)
		}
		if ok && h == readme {
			owned[d] = true
		}
	}
	return owned, nil
}
