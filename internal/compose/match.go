package compose

import (
	"github.com/fleetform/fleetform/api/v1alpha1"
	"github.com/fleetform/fleetform/internal/controlplane"
)

// ignoredLabels never take part in matching (Kalypso's rule).
var ignoredLabels = map[string]bool{
	v1alpha1.LabelPlatformConfig:            true,
	"kustomize.toolkit.fluxcd.io/name":      true,
	"kustomize.toolkit.fluxcd.io/namespace": true,
}

// Applies reports whether an object with labels applies to deployment target dt on cluster
// type ct, by Kalypso's rule: every label must hold, where cluster-type names the cluster
// type, deployment-target names the target, workload names the target's workload, and any
// other key=value must be a label of the cluster type or of the target (a missing label
// reads as "").
func Applies(labels map[string]string, ct *controlplane.ClusterType, dt *controlplane.DeploymentTarget) bool {
	for k, v := range labels {
		if !labelHolds(k, v, ct, dt) {
			return false
		}
	}
	return true
}

// appliesPairs is Applies over an index's list of labels.
func appliesPairs(pairs []labelPair, ct *controlplane.ClusterType, dt *controlplane.DeploymentTarget) bool {
	for _, p := range pairs {
		if !labelHolds(p.k, p.v, ct, dt) {
			return false
		}
	}
	return true
}

func labelHolds(k, v string, ct *controlplane.ClusterType, dt *controlplane.DeploymentTarget) bool {
	switch {
	case ignoredLabels[k]:
		return true
	case k == v1alpha1.LabelClusterType:
		return v == ct.Metadata.Name
	case k == v1alpha1.LabelDeploymentTarget:
		return v == dt.Name
	case k == v1alpha1.LabelWorkload:
		return v == dt.Labels[v1alpha1.LabelWorkload]
	default:
		return ct.Metadata.Labels[k] == v || dt.Labels[k] == v
	}
}

// level is a precedence level of the layered mode, lowest first.
type level int

const (
	levelEnvironment level = iota // no matching labels: applies to the whole environment
	levelLabels                   // generic labels (region, size, ...)
	levelClusterType              // names a cluster type
	levelWorkload                 // names a workload
	levelTarget                   // names a deployment target
)

var levelNames = [...]string{"environment", "labels", "cluster-type", "workload", "deployment-target"}

func (l level) String() string { return levelNames[l] }

// levelOf classifies a label set by the most specific thing it names.
func levelOf(labels map[string]string) level {
	switch {
	case has(labels, v1alpha1.LabelDeploymentTarget):
		return levelTarget
	case has(labels, v1alpha1.LabelWorkload):
		return levelWorkload
	case has(labels, v1alpha1.LabelClusterType):
		return levelClusterType
	}
	for k := range labels {
		if !ignoredLabels[k] {
			return levelLabels
		}
	}
	return levelEnvironment
}

func has(m map[string]string, k string) bool { _, ok := m[k]; return ok }

// index finds, for a (cluster type, deployment target) pair, the labelled items that
// apply, without testing every item against every pair: items naming a cluster type,
// target or workload are looked up by that name; the others are tested per pair.
type index struct {
	byType     map[string][]int
	byTarget   map[string][]int
	byWorkload map[string][]int
	generic    []int
	labels     []map[string]string
	// pairs are each item's labels as a list, without the ignored ones: iterating a small
	// map for each pair would cost more than composing it.
	pairs [][]labelPair
}

type labelPair struct{ k, v string }

func newIndex(labels []map[string]string) *index {
	ix := &index{byType: map[string][]int{}, byTarget: map[string][]int{}, byWorkload: map[string][]int{}, labels: labels,
		pairs: make([][]labelPair, len(labels))}
	for i, ls := range labels {
		for k, v := range ls {
			if !ignoredLabels[k] {
				ix.pairs[i] = append(ix.pairs[i], labelPair{k, v})
			}
		}
		switch {
		case has(ls, v1alpha1.LabelClusterType):
			ix.byType[ls[v1alpha1.LabelClusterType]] = append(ix.byType[ls[v1alpha1.LabelClusterType]], i)
		case has(ls, v1alpha1.LabelDeploymentTarget):
			ix.byTarget[ls[v1alpha1.LabelDeploymentTarget]] = append(ix.byTarget[ls[v1alpha1.LabelDeploymentTarget]], i)
		case has(ls, v1alpha1.LabelWorkload):
			ix.byWorkload[ls[v1alpha1.LabelWorkload]] = append(ix.byWorkload[ls[v1alpha1.LabelWorkload]], i)
		default:
			ix.generic = append(ix.generic, i)
		}
	}
	return ix
}

// matches appends to dst the indexes of the items that apply to (ct, dt), ascending.
func (ix *index) matches(dst []int, ct *controlplane.ClusterType, dt *controlplane.DeploymentTarget) []int {
	dst = dst[:0]
	for _, bucket := range [][]int{ix.byType[ct.Metadata.Name], ix.byTarget[dt.Name], ix.byWorkload[dt.Labels[v1alpha1.LabelWorkload]], ix.generic} {
		for _, i := range bucket {
			if appliesPairs(ix.pairs[i], ct, dt) {
				dst = append(dst, i)
			}
		}
	}
	sortInts(dst)
	return dst
}

func sortInts(a []int) {
	for i := 1; i < len(a); i++ {
		for j := i; j > 0 && a[j] < a[j-1]; j-- {
			a[j], a[j-1] = a[j-1], a[j]
		}
	}
}
