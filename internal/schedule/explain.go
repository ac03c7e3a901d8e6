package schedule

import (
	"fmt"
	"sort"

	"k8s.io/apimachinery/pkg/labels"

	"github.com/fleetform/fleetform/internal/controlplane"
	"github.com/fleetform/fleetform/internal/selector"
)

// Explanation says why a deployment target is, or is not, scheduled on a cluster type.
type Explanation struct {
	Scheduled bool `json:"scheduled"`
	// Reasons are human sentences, for the pair as a whole (unknown names, other
	// environment) or, when empty, see Policies.
	Reasons  []string         `json:"reasons"`
	Policies []PolicyDecision `json:"policies"`
}

// PolicyDecision is one policy's verdict on a pair.
type PolicyDecision struct {
	Policy   string   `json:"policy"`
	Selected bool     `json:"selected"`
	Reasons  []string `json:"reasons"`
}

// Explain tells why deployment target dt is or is not on cluster type ct.
func (r *Result) Explain(dt, ct string) Explanation {
	ex := Explanation{Reasons: []string{}, Policies: []PolicyDecision{}}
	ci, ctProblem := r.findClusterType(ct)
	di, dtProblem := r.findTarget(dt)
	for _, p := range []string{ctProblem, dtProblem} {
		if p != "" {
			ex.Reasons = append(ex.Reasons, p)
		}
	}
	if len(ex.Reasons) > 0 {
		return ex
	}
	if len(r.Policies) == 0 {
		ex.Reasons = append(ex.Reasons, fmt.Sprintf("environment %s has no scheduling policies", r.Environment))
	}
	for _, p := range r.Policies {
		d := r.decide(p, di, ci)
		ex.Scheduled = ex.Scheduled || d.Selected
		ex.Policies = append(ex.Policies, d)
	}
	return ex
}

// CheckTarget says why dt is not a deployment target of the environment, or "".
func (r *Result) CheckTarget(dt string) string {
	_, problem := r.findTarget(dt)
	return problem
}

// CheckClusterType says why ct is not a cluster type of the environment, or "".
func (r *Result) CheckClusterType(ct string) string {
	_, problem := r.findClusterType(ct)
	return problem
}

func (r *Result) findTarget(dt string) (int, string) {
	di := sort.Search(len(r.Targets), func(i int) bool { return r.Targets[i].Name >= dt })
	switch {
	case di < len(r.Targets) && r.Targets[di].Name == dt:
		return di, ""
	case r.elsewhere[dt] != "":
		return -1, fmt.Sprintf("deployment target %q belongs to environment %s, not %s", dt, r.elsewhere[dt], r.Environment)
	}
	names := make([]string, len(r.Targets))
	for i, t := range r.Targets {
		names[i] = t.Name
	}
	return -1, fmt.Sprintf("deployment target %q does not exist", dt) + controlplane.DidYouMean(dt, names)
}

func (r *Result) findClusterType(ct string) (int, string) {
	ci := sort.Search(len(r.ClusterTypes), func(i int) bool { return r.ClusterTypes[i].Metadata.Name >= ct })
	if ci < len(r.ClusterTypes) && r.ClusterTypes[ci].Metadata.Name == ct {
		return ci, ""
	}
	names := make([]string, len(r.ClusterTypes))
	for i, t := range r.ClusterTypes {
		names[i] = t.Metadata.Name
	}
	return -1, fmt.Sprintf("cluster type %q does not exist in environment %s", ct, r.Environment) + controlplane.DidYouMean(ct, names)
}

func (r *Result) decide(p *PolicyResult, di, ci int) PolicyDecision {
	d := PolicyDecision{Policy: p.Policy.Metadata.Name, Reasons: []string{}}
	if !p.Valid {
		d.Reasons = append(d.Reasons, "the policy is invalid (see its errors)")
		return d
	}
	dt, ct := r.Targets[di], r.ClusterTypes[ci]
	if ws := p.Policy.Spec.DeploymentTargetSelector.Workspace; ws != "" && dt.Workspace != ws {
		d.Reasons = append(d.Reasons, fmt.Sprintf("deployment target is in workspace %q, the policy selects workspace %q", dt.Workspace, ws))
	}
	for _, u := range selector.Unmet(p.targetSel, dt.Labels) {
		d.Reasons = append(d.Reasons, "deployment target labels do not satisfy "+u)
	}
	for _, u := range selector.Unmet(p.typeSel, ct.Metadata.Labels) {
		d.Reasons = append(d.Reasons, "cluster type labels do not satisfy "+u)
	}
	d.Selected = len(d.Reasons) == 0
	if d.Selected {
		d.Reasons = append(d.Reasons, fmt.Sprintf("selects the deployment target (%s) and the cluster type (%s)",
			describe(p.targetSel), describe(p.typeSel)))
	}
	return d
}

func describe(s labels.Selector) string {
	if s.Empty() {
		return "all"
	}
	return s.String()
}
