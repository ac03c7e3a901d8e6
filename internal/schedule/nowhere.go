package schedule

import (
	"fmt"
	"slices"
	"strings"

	"github.com/fleetform/fleetform/internal/controlplane"
)

// warnLandsNowhere warns about the deployment targets of the environment that no assignment
// holds: no policy selects them, or the policies that do select no cluster type; and about
// the targets of the snapshot whose environment is not declared at all. (With an invalid
// policy, what it would have selected is unknown: then only the last kind is reported.)
func (r *Result) warnLandsNowhere(s *controlplane.Snapshot) {
	if len(r.FailedPolicies) == 0 {
		selected := make([][]string, len(r.Targets)) // the policies that select each target
		for _, p := range r.Policies {
			for _, di := range p.Targets {
				selected[di] = append(selected[di], p.Policy.Metadata.Name)
			}
		}
		placed := make([]bool, len(r.Targets))
		for _, p := range r.Policies {
			if len(p.Types) > 0 {
				for _, di := range p.Targets {
					placed[di] = true
				}
			}
		}
		for di, dt := range r.Targets {
			switch {
			case placed[di]:
			case len(selected[di]) == 0:
				r.warnTarget(dt, "", fmt.Sprintf("deployment target %s lands nowhere in %s: no scheduling policy selects it", dt.Name, r.Environment),
					fmt.Sprintf("check the policies' deploymentTargetSelector; fleetform explain --env %s --deployment-target %s says why each one does not", r.Environment, dt.Name))
			default:
				r.warnTarget(dt, "", fmt.Sprintf("deployment target %s lands nowhere in %s: %s select%s it, but no cluster type matches %s",
					dt.Name, r.Environment, strings.Join(selected[di], ", "), plural(len(selected[di]), "", "s"), plural(len(selected[di]), "their clusterTypeSelectors", "its clusterTypeSelector")),
					"label a cluster type to match, or change the selector")
			}
		}
	}
	if len(s.DeclaredEnvironments) == 0 {
		return // the environments are unknown (a snapshot made by hand)
	}
	for _, dt := range s.DeploymentTargets {
		if !slices.Contains(s.DeclaredEnvironments, dt.Environment) {
			r.warnTarget(dt, ".environment", fmt.Sprintf("deployment target %s lands nowhere: its environment %q is not declared (declared: %s)",
				dt.Name, dt.Environment, strings.Join(s.DeclaredEnvironments, ", ")), "fix the environment name, or declare the environment")
		}
	}
}

// warnTarget records a warning about a deployment target, at field (relative to the target).
func (r *Result) warnTarget(dt *controlplane.DeploymentTarget, field, msg, hint string) {
	path := dt.Path + field
	if dt.Path == "" {
		path = "metadata.name"
		if field != "" {
			path = "spec" + field
		}
	}
	r.find(dt.Source, true, path, msg, hint)
}

func plural(n int, many, one string) string {
	if n == 1 {
		return one
	}
	return many
}
