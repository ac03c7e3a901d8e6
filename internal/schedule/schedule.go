// Package schedule decides which deployment targets run on which cluster types in one
// environment, with Kalypso's semantics: a SchedulingPolicy selects deployment targets (by
// workspace and label selector) and cluster types (by label selector); the assignments are
// the union over policies, and a pair selected by several policies is one assignment that
// lists them all. It is pure: a Snapshot in, a Result out.
package schedule

import (
	"errors"
	"fmt"
	"sort"

	"k8s.io/apimachinery/pkg/labels"

	"github.com/fleetform/fleetform/api/v1alpha1"
	"github.com/fleetform/fleetform/internal/controlplane"
	"github.com/fleetform/fleetform/internal/selector"
)

// Assignment is one deployment target scheduled on one cluster type.
type Assignment struct {
	Workload         string
	DeploymentTarget string
	ClusterType      string
	Namespace        string
	// Policies are the names of the policies that selected the pair, sorted.
	Policies []string
	Target   *controlplane.DeploymentTarget
	Type     *controlplane.ClusterType
	// Manifests are the target's manifests as this cluster type gets them: with a pin of
	// the environment merged over them.
	Manifests map[string]string
	// Pinned is set when a pin holds the manifests.
	Pinned *Pinned
}

// Result is the schedule of one environment, with what is needed to explain it.
type Result struct {
	Environment string
	// Assignments are sorted by cluster type, then deployment target.
	Assignments []Assignment
	// Targets are the deployment targets of this environment, sorted by name.
	Targets []*controlplane.DeploymentTarget
	// ClusterTypes are sorted by name.
	ClusterTypes []*controlplane.ClusterType
	// Policies are sorted by name; invalid ones are marked and select nothing.
	Policies []*PolicyResult
	// FailedPolicies names the policies that could not be evaluated: what they scheduled
	// before is unknown, so it must be kept.
	FailedPolicies []string
	Diagnostics    []controlplane.Diagnostic

	// elsewhere maps the deployment targets of other environments to their environment.
	elsewhere map[string]string
	// findings are the problems found, in order, located in their documents when Schedule
	// ends (Diagnostics).
	findings []finding
}

// finding is a problem of a document that scheduling found, at path in it.
type finding struct {
	src             controlplane.Source
	path, msg, hint string
	warning         bool
}

// find records a problem at path in src's document (an error, or a warning).
func (r *Result) find(src controlplane.Source, warning bool, path, msg, hint string) {
	r.findings = append(r.findings, finding{src: src, path: path, msg: msg, hint: hint, warning: warning})
}

// locate turns the findings into diagnostics, each with its file and line.
func (r *Result) locate() {
	for _, f := range r.findings {
		if f.warning {
			r.Diagnostics = append(r.Diagnostics, f.src.Warn(f.path, f.msg, f.hint))
		} else {
			r.Diagnostics = append(r.Diagnostics, f.src.Diag(f.path, f.msg, f.hint))
		}
	}
	r.findings = nil
}

// PolicyResult is how one policy matched.
type PolicyResult struct {
	Policy *controlplane.SchedulingPolicy
	Valid  bool
	// Targets are indexes into Result.Targets the policy selects.
	Targets []int
	// Types are indexes into Result.ClusterTypes the policy selects.
	Types     []int
	targetSel labels.Selector
	typeSel   labels.Selector
}

// Schedule computes the assignments of the snapshot's environment.
func Schedule(s *controlplane.Snapshot) *Result {
	r := &Result{Environment: s.Environment, elsewhere: map[string]string{}}
	for _, dt := range s.DeploymentTargets {
		if dt.Environment == s.Environment {
			r.Targets = append(r.Targets, dt)
		} else {
			r.elsewhere[dt.Name] = dt.Environment
		}
	}
	sort.Slice(r.Targets, func(i, j int) bool { return r.Targets[i].Name < r.Targets[j].Name })
	r.ClusterTypes = append(r.ClusterTypes, s.ClusterTypes...)
	sort.Slice(r.ClusterTypes, func(i, j int) bool { return r.ClusterTypes[i].Metadata.Name < r.ClusterTypes[j].Metadata.Name })
	pols := append([]*controlplane.SchedulingPolicy(nil), s.SchedulingPolicies...)
	sort.Slice(pols, func(i, j int) bool { return pols[i].Metadata.Name < pols[j].Metadata.Name })
	for _, p := range pols {
		r.Policies = append(r.Policies, r.evaluate(p))
	}
	r.assign()
	r.applyPins(s)
	r.warnLandsNowhere(s)
	r.locate()
	return r
}

// evaluate parses a policy's selectors and records what it selects.
func (r *Result) evaluate(p *controlplane.SchedulingPolicy) *PolicyResult {
	pr := &PolicyResult{Policy: p}
	var okTarget, okType bool
	pr.targetSel, okTarget = r.parse(p, "spec.deploymentTargetSelector.labelSelector", p.Spec.DeploymentTargetSelector.LabelSelector)
	pr.typeSel, okType = r.parse(p, "spec.clusterTypeSelector.labelSelector", p.Spec.ClusterTypeSelector.LabelSelector)
	if !okTarget || !okType {
		r.FailedPolicies = append(r.FailedPolicies, p.Metadata.Name)
		return pr
	}
	pr.Valid = true
	ws := p.Spec.DeploymentTargetSelector.Workspace
	for i, dt := range r.Targets {
		if (ws == "" || dt.Workspace == ws) && pr.targetSel.Matches(labels.Set(dt.Labels)) {
			pr.Targets = append(pr.Targets, i)
		}
	}
	for i, ct := range r.ClusterTypes {
		if pr.typeSel.Matches(labels.Set(ct.Metadata.Labels)) {
			pr.Types = append(pr.Types, i)
		}
	}
	return pr
}

// parse converts one of a policy's selectors, reporting a missing or invalid one at path.
func (r *Result) parse(p *controlplane.SchedulingPolicy, path string, s *v1alpha1.LabelSelector) (labels.Selector, bool) {
	if s == nil {
		r.find(p.Source, false, path, "labelSelector is required", "write labelSelector: {} to select everything")
		return labels.Nothing(), false
	}
	parsed, err := selector.Parse(s)
	if err != nil {
		var se *selector.Error
		if errors.As(err, &se) {
			path += "." + se.Path
			err = se.Err
		}
		r.find(p.Source, false, path, fmt.Sprintf("invalid selector: %v", err), "")
		return labels.Nothing(), false
	}
	return parsed, true
}

// pairBound is an upper bound of the assignments, to allocate them once: per cluster type,
// the targets of its policies (overlapping policies count a pair more than once), and never
// more than every pair.
func (r *Result) pairBound(policiesOfType [][]int) int {
	n := 0
	for _, pis := range policiesOfType {
		for _, pi := range pis {
			n += len(r.Policies[pi].Targets)
		}
	}
	return min(n, len(r.ClusterTypes)*len(r.Targets))
}

// assign builds the union of the policies' cross products, one assignment per pair.
func (r *Result) assign() {
	policiesOfType := make([][]int, len(r.ClusterTypes))
	for pi, p := range r.Policies {
		for _, ci := range p.Types {
			policiesOfType[ci] = append(policiesOfType[ci], pi)
		}
	}
	single := make([][]string, len(r.Policies))
	for pi, p := range r.Policies {
		single[pi] = []string{p.Policy.Metadata.Name}
	}
	perTarget := make([][]int, len(r.Targets))
	var touched []int
	r.Assignments = make([]Assignment, 0, r.pairBound(policiesOfType))
	for ci, ct := range r.ClusterTypes {
		touched = touched[:0]
		for _, pi := range policiesOfType[ci] {
			for _, di := range r.Policies[pi].Targets {
				if len(perTarget[di]) == 0 {
					touched = append(touched, di)
				}
				perTarget[di] = append(perTarget[di], pi)
			}
		}
		sort.Ints(touched)
		first := len(r.Assignments)
		for _, di := range touched {
			dt := r.Targets[di]
			names := single[perTarget[di][0]] // one policy: the slice is shared (read only)
			if len(perTarget[di]) > 1 {
				names = make([]string, len(perTarget[di]))
				for i, pi := range perTarget[di] {
					names[i] = r.Policies[pi].Policy.Metadata.Name
				}
			}
			r.Assignments = append(r.Assignments, Assignment{
				Workload: dt.Workload, DeploymentTarget: dt.Name, ClusterType: ct.Metadata.Name, Policies: names,
				Target: dt, Type: ct,
			})
			perTarget[di] = perTarget[di][:0]
		}
		setNamespaces(r.Assignments[first:], r.Environment, ct.Metadata.Name)
	}
}
