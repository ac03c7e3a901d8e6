package schedule

import (
	"fmt"
	"maps"

	"k8s.io/apimachinery/pkg/labels"

	"github.com/fleetform/fleetform/api/v1alpha1"
	"github.com/fleetform/fleetform/internal/controlplane"
	"github.com/fleetform/fleetform/internal/selector"
)

// Pinned says that an assignment's manifests are held by one of its environment's pins.
type Pinned struct {
	// Manifests are the pin's overrides (an empty value removes the key).
	Manifests map[string]string `json:"manifests"`
	Reason    string            `json:"reason,omitempty"`
	// Index is the pin's position in the Environment's spec.pins.
	Index int `json:"index"`
}

// pin is a parsed Environment pin.
type pin struct {
	spec  v1alpha1.Pin
	sel   labels.Selector
	index int
}

// applyPins sets the effective manifests of every assignment: the target's, with the first
// matching pin's manifests merged over them.
func (r *Result) applyPins(s *controlplane.Snapshot) {
	pins := r.parsePins(s)
	for i := range r.Assignments {
		a := &r.Assignments[i]
		a.Manifests = a.Target.Manifests
		for _, p := range pins {
			if p.spec.DeploymentTarget == a.DeploymentTarget && p.sel.Matches(labels.Set(a.Type.Metadata.Labels)) {
				a.Manifests = mergeManifests(a.Target.Manifests, p.spec.Manifests)
				a.Pinned = &Pinned{Manifests: p.spec.Manifests, Reason: p.spec.Reason, Index: p.index}
				break
			}
		}
	}
}

func (r *Result) parsePins(s *controlplane.Snapshot) []pin {
	env := s.EnvironmentObject
	if env == nil {
		return nil
	}
	known := map[string]bool{}
	for _, dt := range r.Targets {
		known[dt.Name] = true
	}
	var out []pin
	for i, p := range env.Spec.Pins {
		path := fmt.Sprintf("spec.pins[%d]", i)
		if p.ClusterTypes == nil {
			r.find(env.Source, false, path+".clusterTypes", "clusterTypes is required", "write clusterTypes: {} to pin it on every cluster type")
			continue
		}
		sel, err := selector.Parse(p.ClusterTypes)
		if err != nil {
			r.find(env.Source, false, path+".clusterTypes", "invalid selector: "+err.Error(), "")
			continue
		}
		if len(p.Manifests) == 0 {
			r.find(env.Source, false, path+".manifests", "a pin needs manifests to hold", "for example manifests: {commit: <sha>} or {tag: v1.2.3}")
			continue
		}
		if !known[p.DeploymentTarget] {
			r.find(env.Source, true, path+".deploymentTarget",
				fmt.Sprintf("deployment target %q has no target in environment %s: the pin does nothing", p.DeploymentTarget, s.Environment), "")
		}
		out = append(out, pin{spec: p, sel: sel, index: i})
	}
	return out
}

// mergeManifests overlays a pin on a target's manifests; empty values remove keys.
func mergeManifests(base, over map[string]string) map[string]string {
	out := maps.Clone(base)
	if out == nil {
		out = map[string]string{}
	}
	for k, v := range over {
		if v == "" {
			delete(out, k)
		} else {
			out[k] = v
		}
	}
	return out
}
