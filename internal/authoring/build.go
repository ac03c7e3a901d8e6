package authoring

import (
	"fmt"
	"strings"

	"github.com/fleetform/fleetform/api/v1alpha1"
)

// The builders below turn what a person types (the CLI's flags, the web UI's forms) into
// operations, so that both write the same objects.

// TargetSpec is a deployment target's spec in env, its manifests at repo, branch and path
// (defaults: main and .).
func TargetSpec(env, repo, branch, path string) map[string]any {
	if branch == "" {
		branch = "main"
	}
	if path == "" {
		path = "."
	}
	return map[string]any{"environment": env, "manifests": map[string]any{"repo": repo, "branch": branch, "path": path}}
}

// AddWorkload adds a workload in workspace ("" for none) with labels, and, when target is
// not empty, its first deployment target (in env, its manifests at repo, branch, path).
func AddWorkload(name, workspace string, labels map[string]string, target, env, repo, branch, path string, targetLabels map[string]string) (Operation, error) {
	if workspace != "" {
		if labels == nil {
			labels = map[string]string{}
		}
		labels[v1alpha1.LabelWorkspace] = workspace
	}
	op := Operation{Op: OpAdd, Kind: v1alpha1.KindWorkload, Name: name, Labels: labels}
	if target == "" && repo == "" {
		return op, nil
	}
	if target == "" || repo == "" || env == "" {
		return op, fmt.Errorf("a first deployment target needs its name, an environment and a repository")
	}
	t := TargetSpec(env, repo, branch, path)
	t["name"] = target
	if len(targetLabels) > 0 {
		t["labels"] = targetLabels
	}
	op.Spec = map[string]any{"deploymentTargets": []any{t}}
	return op, nil
}

// AddEnvironment declares an environment, receiving promotions from promoteFrom ("": none).
func AddEnvironment(name, promoteFrom string) Operation {
	op := Operation{Op: OpAdd, Kind: v1alpha1.KindEnvironment, Name: name}
	if promoteFrom != "" {
		op.Spec = map[string]any{"promotion": map[string]any{"from": promoteFrom}}
	}
	return op
}

// Remove removes the object of kind named name, of env; a deployment target of workload,
// in env ("" when its name is used in one environment only).
func Remove(kind, name, env, workload string) Operation {
	op := Operation{Op: OpRemove, Kind: kind, Name: name, Env: env}
	if kind == KindDeploymentTarget {
		op.Workload = workload
	}
	return op
}

// ChangeConfig is a change of the platform-config ConfigMap of scope in env; the caller
// says what it does (Op, Data or Keys).
func ChangeConfig(env string, scope *ConfigScope) Operation {
	return Operation{Kind: v1alpha1.KindConfigMap, Env: env, Scope: scope}
}

// kindWords are the kinds by the words the command line names them with.
var kindWords = map[string]string{
	"environment": v1alpha1.KindEnvironment, "cluster-type": v1alpha1.KindClusterType, "workload": v1alpha1.KindWorkload,
	"target": KindDeploymentTarget, "policy": v1alpha1.KindSchedulingPolicy,
	"registration": v1alpha1.KindWorkloadRegistration, "config-map": v1alpha1.KindConfigMap,
}

// ParseKind returns the kind a word names: environment, cluster-type, workload, target,
// policy, registration or config-map, or the kind's own name (in any case).
func ParseKind(word string) (string, error) {
	if k, ok := kindWords[strings.ToLower(word)]; ok {
		return k, nil
	}
	for _, k := range kindWords {
		if strings.EqualFold(k, word) {
			return k, nil
		}
	}
	return "", fmt.Errorf("kind %q: want environment, cluster-type, workload, target, policy, registration or config-map", word)
}

// AddClusterType adds a cluster type to env with labels and, where not empty, its
// templates.
func AddClusterType(name, env string, labels map[string]string, reconciler, namespaceTemplate, configTemplate string) Operation {
	spec := map[string]any{}
	for k, v := range map[string]string{"reconciler": reconciler, "namespaceService": namespaceTemplate, "configType": configTemplate} {
		if v != "" {
			spec[k] = v
		}
	}
	return Operation{Op: OpAdd, Kind: v1alpha1.KindClusterType, Name: name, Env: env, Labels: labels, Spec: spec}
}

// AddRegistration registers the workloads of repo (read at branch and path) for workspace.
func AddRegistration(name, repo, branch, path, workspace string) Operation {
	return Operation{Op: OpAdd, Kind: v1alpha1.KindWorkloadRegistration, Name: name,
		Spec: map[string]any{"workload": map[string]any{"repo": repo, "branch": branch, "path": path}, "workspace": workspace}}
}

// AddPolicy adds a scheduling policy to env from two kubectl selectors (deployment targets,
// cluster types; "" selects everything), for the targets of workspace ("" for every one).
func AddPolicy(name, env, workspace, targets, clusterTypes string) (Operation, error) {
	ts, err := ParseSelector(targets)
	if err != nil {
		return Operation{}, &SelectorError{Of: SelectsTargets, Err: err}
	}
	cs, err := ParseSelector(clusterTypes)
	if err != nil {
		return Operation{}, &SelectorError{Of: SelectsClusterTypes, Err: err}
	}
	dts := map[string]any{"labelSelector": SelectorMap(ts)}
	if workspace != "" {
		dts["workspace"] = workspace
	}
	spec := map[string]any{"deploymentTargetSelector": dts, "clusterTypeSelector": map[string]any{"labelSelector": SelectorMap(cs)}}
	return Operation{Op: OpAdd, Kind: v1alpha1.KindSchedulingPolicy, Name: name, Env: env, Spec: spec}, nil
}

// What a policy's selector selects.
const (
	SelectsTargets      = "deployment targets"
	SelectsClusterTypes = "cluster types"
)

// SelectorError is a selector that does not parse, and which one it is.
type SelectorError struct {
	// Of is SelectsTargets or SelectsClusterTypes.
	Of  string
	Err error
}

func (e *SelectorError) Error() string { return "the selector of " + e.Of + ": " + e.Err.Error() }

func (e *SelectorError) Unwrap() error { return e.Err }

// Requirement is one row of a selector builder: KEY OP VALUES, OP one of =, !=, in, notin,
// exists and !exists (VALUES comma-separated for in and notin, unused for exists).
type Requirement struct {
	Key, Operator, Values string
}

// SelectorText writes requirements as a kubectl selector ("" selects everything); rows
// without a key are skipped.
func SelectorText(reqs []Requirement) (string, error) {
	var parts []string
	for _, r := range reqs {
		key, values := strings.TrimSpace(r.Key), strings.TrimSpace(r.Values)
		if key == "" {
			continue
		}
		switch r.Operator {
		case "=", "!=":
			parts = append(parts, key+r.Operator+values)
		case "in", "notin":
			parts = append(parts, key+" "+r.Operator+" ("+values+")")
		case "exists":
			parts = append(parts, key)
		case "!exists":
			parts = append(parts, "!"+key)
		default:
			return "", fmt.Errorf("selector operator %q: want =, !=, in, notin, exists or !exists", r.Operator)
		}
	}
	text := strings.Join(parts, ",")
	if _, err := ParseSelector(text); err != nil {
		return "", err
	}
	return text, nil
}
