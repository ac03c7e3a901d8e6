package authoring

import (
	"fmt"
	"slices"
	"strings"

	"github.com/fleetform/fleetform/api/v1alpha1"
	"github.com/fleetform/fleetform/internal/controlplane"
)

// maxKnownNames bounds the names an unknown-name error lists.
const maxKnownNames = 20

// unknownScopes are the config values set for a cluster type, workload or deployment target
// that the environment does not have, after the change: a typo would match nothing and
// change nothing, so it is refused, with the names the environment does have.
func unknownScopes(ops []Operation, after map[string]*fleet) []controlplane.Diagnostic {
	var out []controlplane.Diagnostic
	for _, op := range ops {
		if op.Kind != v1alpha1.KindConfigMap || (op.Op != OpSet && op.Op != OpAdd) || op.Scope == nil {
			continue
		}
		f := after[op.Env]
		if f == nil || f.run == nil || f.run.Snapshot == nil || hasErrors(f.diags) {
			continue // an environment that does not load whole (a repository unread) says so itself
		}
		what, name, known := scopeNames(op.Scope, f.run.Snapshot)
		if what == "" || slices.Contains(known, name) {
			continue
		}
		out = append(out, controlplane.Diagnostic{Severity: controlplane.SeverityError, Kind: op.Kind, Name: op.Name,
			Message: fmt.Sprintf("%s %q is not in environment %s: the value would apply to nothing; known: %s", what, name, op.Env, listNames(known))})
	}
	return out
}

// scopeNames is what a scope names and the names of that kind in the snapshot ("" for
// scopes that name nothing: selectors, the environment level).
func scopeNames(s *ConfigScope, snap *controlplane.Snapshot) (what, name string, known []string) {
	switch {
	case s.ClusterType != "":
		for _, ct := range snap.ClusterTypes {
			known = append(known, ct.Metadata.Name)
		}
		return "cluster type", s.ClusterType, known
	case s.Workload != "":
		for _, w := range snap.Workloads {
			known = append(known, w.Metadata.Name)
		}
		return "workload", s.Workload, known
	case s.DeploymentTarget != "":
		for _, dt := range snap.DeploymentTargets {
			known = append(known, dt.Name)
		}
		return "deployment target", s.DeploymentTarget, known
	}
	return "", "", nil
}

func hasErrors(ds []controlplane.Diagnostic) bool {
	return slices.ContainsFunc(ds, func(d controlplane.Diagnostic) bool { return d.Severity == controlplane.SeverityError })
}

func listNames(names []string) string {
	names = slices.Compact(slices.Sorted(slices.Values(names)))
	switch {
	case len(names) == 0:
		return "none"
	case len(names) > maxKnownNames:
		return strings.Join(names[:maxKnownNames], ", ") + fmt.Sprintf(" and %d more", len(names)-maxKnownNames)
	}
	return strings.Join(names, ", ")
}
