package pipeline

import (
	"errors"
	"fmt"
	"strings"

	"github.com/fleetform/fleetform/internal/compose"
	"github.com/fleetform/fleetform/internal/controlplane"
	"github.com/fleetform/fleetform/internal/schedule"
)

// Explanation answers "is DT on CT, why, and where does each config value come from?": the
// contract of `fleetform explain -o json`, extended with the scheduling decision.
type Explanation struct {
	Environment      string                    `json:"environment"`
	ClusterType      string                    `json:"clusterType"`
	DeploymentTarget string                    `json:"deploymentTarget"`
	Values           map[string]*compose.Value `json:"values"`
	Scheduled        bool                      `json:"scheduled"`
	Namespace        string                    `json:"namespace"`
	Scheduling       schedule.Explanation      `json:"scheduling"`
	// Pinned is set when a pin of the environment holds the target's manifests here.
	Pinned *schedule.Pinned `json:"pinned,omitempty"`
	// Manifests are the target's manifests as this cluster type gets them.
	Manifests map[string]string `json:"manifests"`
}

// Explain explains deployment target dt on cluster type ct (only key's value when key is
// not empty). An unknown name, or a key that is not set, is an error saying so.
func (r *Run) Explain(ct, dt, key string) (*Explanation, error) {
	cType, target := findPair(r.Snapshot, ct, dt)
	if cType == nil || target == nil {
		ex := r.Schedule.Explain(dt, ct)
		return nil, errors.New(strings.Join(ex.Reasons, "; "))
	}
	cfg := compose.New(r.Snapshot).Compose(cType, target)
	doc := &Explanation{
		Environment: r.Snapshot.Environment, ClusterType: ct, DeploymentTarget: dt,
		Values: map[string]*compose.Value{}, Namespace: schedule.Namespace(r.Snapshot.Environment, ct, dt),
		Scheduling: r.Schedule.Explain(dt, ct),
	}
	doc.Scheduled = doc.Scheduling.Scheduled
	doc.Manifests = target.Manifests
	for i := range r.Schedule.Assignments {
		if a := &r.Schedule.Assignments[i]; a.ClusterType == ct && a.DeploymentTarget == dt {
			doc.Manifests, doc.Pinned = a.Manifests, a.Pinned
		}
	}
	for k, v := range cfg.Values {
		if key == "" || k == key {
			doc.Values[k] = v
		}
	}
	if key != "" && len(doc.Values) == 0 {
		return nil, fmt.Errorf("key %q is not set for %s on %s", key, dt, ct)
	}
	return doc, nil
}

// findPair finds the cluster type and the deployment target (of this environment).
func findPair(s *controlplane.Snapshot, ctName, dtName string) (*controlplane.ClusterType, *controlplane.DeploymentTarget) {
	var ct *controlplane.ClusterType
	var dt *controlplane.DeploymentTarget
	for _, c := range s.ClusterTypes {
		if c.Metadata.Name == ctName {
			ct = c
		}
	}
	for _, d := range s.DeploymentTargets {
		if d.Name == dtName && d.Environment == s.Environment {
			dt = d
		}
	}
	return ct, dt
}

// Place is one pair of a list: the other side's name and the decision.
type Place struct {
	ClusterType      string               `json:"clusterType,omitempty"`
	DeploymentTarget string               `json:"deploymentTarget,omitempty"`
	Workload         string               `json:"workload,omitempty"`
	Scheduled        bool                 `json:"scheduled"`
	Namespace        string               `json:"namespace"`
	Scheduling       schedule.Explanation `json:"scheduling"`
}

// TargetPlaces answers "where could this deployment target go?": every cluster type of the
// environment, with the decision.
type TargetPlaces struct {
	Environment      string  `json:"environment"`
	DeploymentTarget string  `json:"deploymentTarget"`
	ClusterTypes     []Place `json:"clusterTypes"`
}

// ClusterTypePlaces answers "what is on this cluster type?": every deployment target of
// the environment, on it or not, with the decision.
type ClusterTypePlaces struct {
	Environment       string  `json:"environment"`
	ClusterType       string  `json:"clusterType"`
	DeploymentTargets []Place `json:"deploymentTargets"`
}

// TargetPlaces explains one deployment target against every cluster type.
func (r *Run) TargetPlaces(dt string) (*TargetPlaces, error) {
	if problem := r.Schedule.CheckTarget(dt); problem != "" {
		return nil, errors.New(problem)
	}
	doc := &TargetPlaces{Environment: r.Snapshot.Environment, DeploymentTarget: dt, ClusterTypes: []Place{}}
	for _, ct := range r.Schedule.ClusterTypes {
		name := ct.Metadata.Name
		ex := r.Schedule.Explain(dt, name)
		doc.ClusterTypes = append(doc.ClusterTypes, Place{ClusterType: name, Scheduled: ex.Scheduled,
			Namespace: schedule.Namespace(r.Snapshot.Environment, name, dt), Scheduling: ex})
	}
	return doc, nil
}

// ClusterTypePlaces explains every deployment target of the environment against one
// cluster type.
func (r *Run) ClusterTypePlaces(ct string) (*ClusterTypePlaces, error) {
	if problem := r.Schedule.CheckClusterType(ct); problem != "" {
		return nil, errors.New(problem)
	}
	doc := &ClusterTypePlaces{Environment: r.Snapshot.Environment, ClusterType: ct, DeploymentTargets: []Place{}}
	for _, dt := range r.Schedule.Targets {
		ex := r.Schedule.Explain(dt.Name, ct)
		doc.DeploymentTargets = append(doc.DeploymentTargets, Place{DeploymentTarget: dt.Name, Workload: dt.Workload,
			Scheduled: ex.Scheduled, Namespace: schedule.Namespace(r.Snapshot.Environment, ct, dt.Name), Scheduling: ex})
	}
	return doc, nil
}

// WhyLines is a decision as sentences: the pair's own reasons, else each policy's verdict
// (for a scheduled pair, only the policies that selected it).
func WhyLines(ex schedule.Explanation) []string {
	if len(ex.Reasons) > 0 {
		return ex.Reasons
	}
	var out []string
	for _, p := range ex.Policies {
		if ex.Scheduled && !p.Selected {
			continue
		}
		out = append(out, fmt.Sprintf("policy %s: %s", p.Policy, strings.Join(p.Reasons, "; ")))
	}
	if len(out) == 0 {
		out = append(out, "")
	}
	return out
}
