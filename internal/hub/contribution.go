package hub

import (
	"cmp"
	"slices"
)

// contribution is what one cluster adds to the rollout counters: one fresh cluster at its
// revision, and for every deployment target the desired state of that revision schedules on
// its cluster type, the state it counts in.
type contribution struct {
	env, clusterType, revision string
	states                     map[string]State // deployment target -> state
}

// stateOf maps a report to a target's rollout state: the deployment's own entry decides,
// else the cluster's status.
func stateOf(status ClusterStatus, entry *DeploymentState) State {
	if entry != nil {
		switch entry.Status {
		case Ready:
			return StateCompliant
		case Failed:
			return StateFailed
		default:
			return StateProgressing
		}
	}
	switch status {
	case Compliant:
		return StateCompliant
	case NonCompliant:
		return StateFailed
	default:
		return StateProgressing
	}
}

// contributionOf computes a cluster's contribution; nil when it counts nowhere (never
// reported, or stale). targets are the deployment targets its revision schedules on its
// cluster type (none when the revision has no desired state).
func contributionOf(c ClusterRecord, deployments []DeploymentState, targets []string) *contribution {
	if !c.Reported || !c.Fresh {
		return nil
	}
	byTarget := make(map[string]*DeploymentState, len(deployments))
	for i := range deployments {
		byTarget[deployments[i].DeploymentTarget] = &deployments[i]
	}
	out := &contribution{env: c.Environment, clusterType: c.ClusterType, revision: c.Revision, states: make(map[string]State, len(targets))}
	for _, dt := range targets {
		out.states[dt] = stateOf(c.Status, byTarget[dt])
	}
	return out
}

// deltas returns the counter changes that turn contribution old into new (either may be
// nil), sorted so that concurrent writers lock counter rows in the same order.
func deltas(old, next *contribution) ([]TargetCount, []ClusterCount) {
	var targets []TargetCount
	var clusters []ClusterCount
	add := func(c *contribution, sign int) {
		if c == nil {
			return
		}
		clusters = append(clusters, ClusterCount{Environment: c.env, ClusterType: c.clusterType, Revision: c.revision, Count: sign})
		for dt, st := range c.states {
			targets = append(targets, TargetCount{Environment: c.env, ClusterType: c.clusterType, Revision: c.revision,
				DeploymentTarget: dt, State: st, Count: sign})
		}
	}
	add(old, -1)
	add(next, +1)
	return mergeTargetCounts(targets), mergeClusterCounts(clusters)
}

// mergeTargetCounts sums deltas with the same key, drops zeros, and sorts them.
func mergeTargetCounts(in []TargetCount) []TargetCount {
	type key struct{ env, ct, rev, dt, st string }
	sum := map[key]int{}
	for _, t := range in {
		sum[key{t.Environment, t.ClusterType, t.Revision, t.DeploymentTarget, string(t.State)}] += t.Count
	}
	out := make([]TargetCount, 0, len(sum))
	for k, n := range sum {
		if n != 0 {
			out = append(out, TargetCount{Environment: k.env, ClusterType: k.ct, Revision: k.rev, DeploymentTarget: k.dt, State: State(k.st), Count: n})
		}
	}
	slices.SortFunc(out, func(a, b TargetCount) int {
		return cmp.Or(cmp.Compare(a.Environment, b.Environment), cmp.Compare(a.ClusterType, b.ClusterType),
			cmp.Compare(a.Revision, b.Revision), cmp.Compare(a.DeploymentTarget, b.DeploymentTarget), cmp.Compare(a.State, b.State))
	})
	return out
}

// mergeClusterCounts sums deltas with the same key, drops zeros, and sorts them.
func mergeClusterCounts(in []ClusterCount) []ClusterCount {
	type key struct{ env, ct, rev string }
	sum := map[key]int{}
	for _, c := range in {
		sum[key{c.Environment, c.ClusterType, c.Revision}] += c.Count
	}
	out := make([]ClusterCount, 0, len(sum))
	for k, n := range sum {
		if n != 0 {
			out = append(out, ClusterCount{Environment: k.env, ClusterType: k.ct, Revision: k.rev, Count: n})
		}
	}
	slices.SortFunc(out, func(a, b ClusterCount) int {
		return cmp.Or(cmp.Compare(a.Environment, b.Environment), cmp.Compare(a.ClusterType, b.ClusterType), cmp.Compare(a.Revision, b.Revision))
	})
	return out
}
