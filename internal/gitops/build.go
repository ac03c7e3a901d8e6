package gitops

import (
	"bytes"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/fleetform/fleetform/internal/platform"
	"github.com/fleetform/fleetform/internal/render"
)

// build renders what changed and edits the tree.
func (pl *planner) build(in Input) error {
	p := pl.p
	p.Output = render.Render(in.Snapshot, in.Schedule, render.Options{
		Workers: pl.opts.Workers, Skip: pl.unchanged, Progress: pl.opts.Progress,
	})
	owned, err := pl.ownedClusterTypes(p.Output.ClusterTypes)
	if err != nil {
		return err
	}
	previous, err := pl.previousAssignments(owned)
	if err != nil {
		return err
	}
	next := newState(p.Environment)
	affected := map[string]bool{}
	for _, ct := range p.Output.ClusterTypes {
		if err := pl.set(ct+"/"+render.ReadmeFile, []byte(render.ReadmeText), affected); err != nil {
			return err
		}
	}
	current, err := pl.writeAssignments(previous, next, affected)
	if err != nil {
		return err
	}
	hasErrors := platform.HasErrors(in.Snapshot.Diagnostics) || len(in.Schedule.FailedPolicies) > 0
	if err := pl.removeLost(previous, current, owned, next, hasErrors, affected); err != nil {
		return err
	}
	if c := p.Output.PromotedCommit; c != "" {
		if err := pl.set(render.PromotedCommitFile, []byte(c), nil); err != nil {
			return err
		}
	}
	pl.checkMassDelete(len(previous), len(owned))
	p.ClusterTypesAffected = sortedSet(affected)
	return pl.writeState(next)
}

// writeAssignments writes the rendered assignments and records every current one in the
// next state. It returns the folders of the current assignments.
func (pl *planner) writeAssignments(previous map[string]AssignmentRef, next *state, affected map[string]bool) (map[string]bool, error) {
	p := pl.p
	current := map[string]bool{}
	for i := range p.Output.Assignments {
		a := &p.Output.Assignments[i]
		dir := a.Dir()
		current[dir] = true
		if _, ok := previous[dir]; !ok && a.Err == nil {
			p.AssignmentsAdded = append(p.AssignmentsAdded, refOf(a.Assignment))
		}
		switch {
		case a.Err != nil:
			p.Failed = append(p.Failed, FailedAssignment{AssignmentRef: refOf(a.Assignment), Error: a.Err.Error()})
			if pl.prev != nil {
				if e, ok := pl.prev.assignments[dir]; ok {
					next.assignments[dir] = e // unchanged: rendered again once it works
				}
			}
			continue
		case a.Files == nil:
			p.Skipped++
		default:
			p.Rendered++
			if err := pl.replaceDir(dir, a.Files, affected); err != nil {
				return nil, err
			}
		}
		next.assignments[dir] = stateEntry{digest: a.InputDigest, workload: a.Workload, namespace: a.Namespace}
	}
	return current, nil
}

// replaceDir makes a deployment target's folder hold exactly the rendered files.
func (pl *planner) replaceDir(dir string, f *render.Files, affected map[string]bool) error {
	want := map[string][]byte{}
	f.Each(func(name string, content []byte) { want[name] = content })
	files, dirs, err := pl.p.editor.list(pl.p.full(dir))
	if err != nil {
		return err
	}
	for _, name := range files {
		if _, ok := want[name]; !ok {
			if err := pl.remove(dir+"/"+name, affected); err != nil {
				return err
			}
		}
	}
	for _, name := range dirs {
		if err := pl.remove(dir+"/"+name, affected); err != nil {
			return err
		}
	}
	for _, name := range slices.Sorted(maps.Keys(want)) {
		if err := pl.set(dir+"/"+name, want[name], affected); err != nil {
			return err
		}
	}
	return nil
}

// removeLost removes the folders of assignments and cluster types that are gone, unless
// the control plane has errors: then they are kept and reported as deferred.
func (pl *planner) removeLost(previous map[string]AssignmentRef, current, owned map[string]bool, next *state, hasErrors bool, affected map[string]bool) error {
	p := pl.p
	currentTypes := map[string]bool{}
	for _, ct := range p.Output.ClusterTypes {
		currentTypes[ct] = true
	}
	for _, dir := range slices.Sorted(maps.Keys(previous)) {
		if current[dir] {
			continue
		}
		if hasErrors {
			p.Deferred = append(p.Deferred, dir)
			if e, ok := pl.prev.lookup(dir); ok {
				next.assignments[dir] = e
			}
			continue
		}
		if err := pl.remove(dir, affected); err != nil {
			return err
		}
		p.AssignmentsRemoved = append(p.AssignmentsRemoved, previous[dir])
	}
	for _, ct := range sortedSet(owned) {
		if currentTypes[ct] {
			continue
		}
		if hasErrors {
			p.Deferred = append(p.Deferred, ct)
			next.clusterTypes[ct] = plumbing.ZeroHash // still owned; compared in full next time
			continue
		}
		if err := pl.remove(ct, affected); err != nil {
			return err
		}
	}
	return nil
}

func (s *state) lookup(dir string) (stateEntry, bool) {
	if s == nil {
		return stateEntry{}, false
	}
	e, ok := s.assignments[dir]
	return e, ok
}

// set writes a file (path relative to the GitOps path) and records the change.
func (pl *planner) set(rel string, content []byte, affected map[string]bool) error {
	p := pl.p
	h := objectHash(plumbing.BlobObject, content)
	action, old, err := p.editor.setFile(p.full(rel), h)
	if err != nil || action == actionNone {
		return err
	}
	p.pack.add(plumbing.BlobObject, content)
	c := Change{Path: rel, Action: string(action)}
	if pl.opts.Diff {
		c.New = content
		if action == actionModify {
			if c.Old, err = p.blob(old); err != nil {
				return err
			}
		}
	}
	p.Changes = append(p.Changes, c)
	markAffected(affected, rel)
	return nil
}

// remove deletes a file or folder (relative to the GitOps path) and records each file.
func (pl *planner) remove(rel string, affected map[string]bool) error {
	p := pl.p
	removed, err := p.editor.remove(p.full(rel))
	if err != nil {
		return err
	}
	prefix := p.full("")
	for _, full := range slices.Sorted(maps.Keys(removed)) {
		c := Change{Path: strings.TrimPrefix(full, prefix), Action: string(actionDelete)}
		if p.base == "" {
			c.Path = full
		}
		if pl.opts.Diff {
			if c.Old, err = p.blob(removed[full]); err != nil {
				return err
			}
		}
		p.Changes = append(p.Changes, c)
	}
	if len(removed) > 0 {
		markAffected(affected, rel)
	}
	return nil
}

func markAffected(affected map[string]bool, rel string) {
	if affected == nil {
		return
	}
	if ct, _, ok := strings.Cut(rel, "/"); ok && !strings.HasPrefix(ct, ".") {
		affected[ct] = true
	} else if !strings.HasPrefix(rel, ".") {
		affected[rel] = true
	}
}

// checkMassDelete flags a plan that removes more than the threshold of the owned
// deployment-target folders (or cluster-type folders).
func (pl *planner) checkMassDelete(ownedTargets, ownedTypes int) {
	p := pl.p
	threshold := pl.opts.MassDeleteThreshold
	if threshold <= 0 {
		threshold = 0.5
	}
	removedTypes := 0
	for _, c := range p.Changes {
		if c.Action == string(actionDelete) && strings.HasSuffix(c.Path, "/"+render.ReadmeFile) && strings.Count(c.Path, "/") == 1 {
			removedTypes++
		}
	}
	removed, owned := len(p.AssignmentsRemoved), ownedTargets
	if ownedTypes > 0 && float64(removedTypes)/float64(ownedTypes) > float64(removed)/float64(max(owned, 1)) {
		removed, owned = removedTypes, ownedTypes
	}
	if removed > 0 && float64(removed) > threshold*float64(owned) {
		p.MassDelete = &MassDelete{Removed: removed, Owned: owned, Threshold: threshold}
	}
}

// writeState records the new state, with the object name of every cluster-type folder.
func (pl *planner) writeState(next *state) error {
	p := pl.p
	for _, ct := range p.Output.ClusterTypes {
		chain, err := p.editor.walk(p.full(ct), false)
		if err != nil {
			return err
		}
		if chain != nil {
			next.clusterTypes[ct], _ = p.editor.writeDir(chain[len(chain)-1], p.pack)
		}
	}
	data := next.encode()
	if pl.prev != nil && bytes.Equal(data, pl.prev.encode()) {
		return nil
	}
	h := objectHash(plumbing.BlobObject, data)
	action, _, err := p.editor.setFile(p.full(StateFile), h)
	if err != nil {
		return err
	}
	if action != actionNone {
		p.pack.add(plumbing.BlobObject, data)
		p.StateChanged = true
	}
	return nil
}

// ownedClusterTypes returns the cluster-type folders fleetform owns: the ones it renders,
// the ones its state records, and, when there is no state (a repository Kalypso wrote),
// every folder holding Kalypso's cluster-type README.
func (pl *planner) ownedClusterTypes(current []string) (map[string]bool, error) {
	owned := map[string]bool{}
	for _, ct := range current {
		owned[ct] = true
	}
	if pl.prev != nil {
		for ct := range pl.prev.clusterTypes {
			owned[ct] = true
		}
		return owned, nil
	}
	_, dirs, err := pl.p.editor.list(pl.p.base)
	if err != nil {
		return nil, err
	}
	readme := objectHash(plumbing.BlobObject, []byte(render.ReadmeText))
	for _, d := range dirs {
		if strings.HasPrefix(d, ".") {
			continue
		}
		h, ok, err := pl.p.editor.file(pl.p.full(d + "/" + render.ReadmeFile))
		if err != nil {
			return nil, err
		}
		if ok && h == readme {
			owned[d] = true
		}
	}
	return owned, nil
}

// previousAssignments returns the deployment-target folders the branch has: from the
// state, plus the folders actually present in owned cluster-type folders the state does
// not vouch for (no state, or changed by someone else).
func (pl *planner) previousAssignments(owned map[string]bool) (map[string]AssignmentRef, error) {
	out := map[string]AssignmentRef{}
	if pl.prev != nil {
		for dir, e := range pl.prev.assignments {
			ct, dt, _ := strings.Cut(dir, "/")
			out[dir] = AssignmentRef{Workload: e.workload, DeploymentTarget: dt, ClusterType: ct, Namespace: e.namespace}
		}
	}
	for _, ct := range sortedSet(owned) {
		if pl.prev != nil && !pl.dirty[ct] {
			if _, recorded := pl.prev.clusterTypes[ct]; recorded {
				continue
			}
		}
		_, dirs, err := pl.p.editor.list(pl.p.full(ct))
		if err != nil {
			return nil, fmt.Errorf("list %s: %w", ct, err)
		}
		for _, d := range dirs {
			if _, ok := out[ct+"/"+d]; !ok {
				out[ct+"/"+d] = AssignmentRef{DeploymentTarget: d, ClusterType: ct}
			}
		}
	}
	return out, nil
}
