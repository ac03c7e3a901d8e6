package authoring

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	yaml "go.yaml.in/yaml/v3"

	"github.com/fleetform/fleetform/api/v1alpha1"
	"github.com/fleetform/fleetform/internal/controlplane"
)

// Annotations fleetform writes on Environments: the templates `add cluster-type` uses
// when none is given.
const (
	AnnotationReconciler = "fleetform.io/default-reconciler"
	AnnotationNamespace  = "fleetform.io/default-namespace-template"
	AnnotationConfig     = "fleetform.io/default-config-template"
)

// Default templates of new cluster types.
const (
	DefaultReconciler = "builtin/flux"
	DefaultNamespace  = "builtin/namespace"
	DefaultConfig     = "builtin/configmap"
)

// apply makes one operation's edits in the workspace.
func (ws *workspace) apply(op Operation) error {
	switch {
	case op.Kind == v1alpha1.KindEnvironment && op.Op == OpAdd:
		return ws.addEnvironment(op, "", nil)
	case op.Kind == v1alpha1.KindEnvironment && op.Op == OpRemove:
		return ws.removeEnvironment(op)
	case op.Kind == KindDeploymentTarget:
		return ws.target(op)
	case op.Kind == v1alpha1.KindConfigMap && op.Scope != nil:
		return ws.configRefusal(op, ws.config(op))
	}
	if _, err := scopeOf(op.Kind); err != nil {
		return err
	}
	switch op.Op {
	case OpAdd:
		return ws.add(op)
	case OpSet:
		return ws.set(op)
	case OpRemove:
		return ws.remove(op)
	}
	return fmt.Errorf("op %q on %s: want add, set or remove", op.Op, op.Kind)
}

// configRefusal is err, an aliasError of a config change, located in the ConfigMap that
// refused it; other errors are returned as they are.
func (ws *workspace) configRefusal(op Operation, err error) error {
	var ae *aliasError
	if !errors.As(err, &ae) {
		return err
	}
	labels, _, lerr := LevelLabels(op.Scope)
	if lerr != nil {
		return err
	}
	if l, ferr := ws.findLevel(op.Env, labels); ferr == nil && l != nil {
		return l.refusal(err)
	}
	return err
}

func apiVersionOf(kind string) string {
	if kind == v1alpha1.KindConfigMap {
		return "v1"
	}
	return v1alpha1.APIVersion
}

func (ws *workspace) add(op Operation) error {
	if err := checkName(op.Kind, op.Name); err != nil {
		return err
	}
	if l, err := ws.find(op.Kind, op.Name, op.Env); err != nil {
		return err
	} else if l != nil {
		return fmt.Errorf("%s %q already exists in %s", op.Kind, op.Name, l.key)
	}
	body := map[string]any{}
	labels := op.Labels
	if op.Kind == v1alpha1.KindConfigMap {
		labels = maps.Clone(labels)
		if labels == nil {
			labels = map[string]string{}
		}
		labels[v1alpha1.LabelPlatformConfig] = "true"
		data := map[string]any{}
		for k, v := range op.Data {
			n, err := valueNode(v)
			if err != nil {
				return fmt.Errorf("%s: %w", k, err)
			}
			data[k] = n
		}
		body["data"] = data
	} else {
		spec := op.Spec
		if spec == nil {
			spec = map[string]any{}
		}
		if op.Kind == v1alpha1.KindClusterType {
			ws.clusterTypeDefaults(spec, op.Env)
		}
		if op.Kind == v1alpha1.KindWorkload {
			if _, ok := spec["deploymentTargets"]; !ok {
				spec["deploymentTargets"] = []any{}
			}
		}
		body["spec"] = spec
	}
	doc, err := newDoc(apiVersionOf(op.Kind), op.Kind, op.Name, labels, "", body)
	if err != nil {
		return err
	}
	k, err := ws.fileFor(op.Kind, op.Name, op.Env)
	if err != nil {
		return err
	}
	return ws.appendDoc(k, doc)
}

func (ws *workspace) mustFind(kind, name, env string) (*located, error) {
	l, err := ws.find(kind, name, env)
	if err != nil {
		return nil, err
	}
	if l == nil {
		where := "the common content"
		if env != "" {
			where = "environment " + env
		}
		err := fmt.Errorf("%s %q is not defined in %s", kind, name, where)
		if old, ferr := ws.findLeftOut(kind, name, env); ferr == nil && old != nil {
			err = fmt.Errorf("%w: %s:%d defines it, but the control plane does not read that file (.sourceignore or Flux's default exclusions "+
				"leave it out), so it is not changed (change it by hand, or add the object to have it read)", err, old.key, old.line())
		}
		return nil, err
	}
	return l, nil
}

func (ws *workspace) set(op Operation) error {
	l, err := ws.mustFind(op.Kind, op.Name, op.Env)
	if err != nil {
		return err
	}
	root := l.doc.root()
	if len(op.Labels) > 0 {
		meta, err := ensureMap(root, "metadata")
		if err != nil {
			return l.refusal(err)
		}
		labels, err := ensureMap(meta, "labels")
		if err != nil {
			return l.refusal(err)
		}
		for _, k := range slices.Sorted(maps.Keys(op.Labels)) {
			set(labels, k, str(op.Labels[k]))
		}
	}
	if len(op.Spec) > 0 {
		spec, err := ensureMap(root, "spec")
		if err != nil {
			return l.refusal(err)
		}
		n, err := toNode(op.Spec)
		if err != nil {
			return err
		}
		if err := mergeInto(spec, n); err != nil {
			return l.refusal(err)
		}
	}
	l.doc.edited = true
	return ws.save(l)
}

func (ws *workspace) remove(op Operation) error {
	l, err := ws.mustFind(op.Kind, op.Name, op.Env)
	if err != nil {
		return err
	}
	l.doc.removed = true
	return ws.save(l)
}

// target adds, changes or removes a deployment target inside its Workload. A target is
// known by its name and environment (one name may be used once per environment): op.Env, or
// a new target's spec.environment.
func (ws *workspace) target(op Operation) error {
	if op.Workload == "" && op.Op != OpAdd {
		w, t, err := ws.resolveTarget(op.Name)
		if err != nil {
			return err
		}
		op.Workload, op.Name = w, t
	}
	if op.Workload == "" {
		return fmt.Errorf("DeploymentTarget %q: the workload is required", op.Name)
	}
	if err := checkName(KindDeploymentTarget, op.Name); err != nil {
		return err
	}
	op, err := newTargetEnv(op)
	if err != nil {
		return err
	}
	l, err := ws.mustFind(v1alpha1.KindWorkload, op.Workload, "")
	if err != nil {
		return fmt.Errorf("%w (workloads kept in an application repository are edited there)", err)
	}
	spec, err := ensureMap(l.doc.root(), "spec")
	if err != nil {
		return l.refusal(err)
	}
	seq := get(spec, "deploymentTargets")
	if err := throughAlias(spec, "deploymentTargets", seq); err != nil {
		return l.refusal(err)
	}
	if seq == nil || seq.Kind != yaml.SequenceNode {
		seq = &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"}
		set(spec, "deploymentTargets", seq)
	}
	seq.Style = 0 // an empty [] becomes a block list
	at, err := l.targetAt(seq, op)
	if err != nil {
		return err
	}
	if err := editTargets(seq, at, op); err != nil {
		return l.refusal(err)
	}
	if env, _ := op.Spec["environment"].(string); env != "" {
		if _, err := ws.envInfo(env); err != nil {
			return err
		}
	}
	l.doc.edited = true
	return ws.save(l)
}

// newTargetEnv gives a new target without spec.environment the environment op.Env names.
func newTargetEnv(op Operation) (Operation, error) {
	if op.Op != OpAdd || op.Env == "" {
		return op, nil
	}
	switch env, _ := op.Spec["environment"].(string); {
	case env == "":
		op.Spec = maps.Clone(op.Spec)
		if op.Spec == nil {
			op.Spec = map[string]any{}
		}
		op.Spec["environment"] = op.Env
	case env != op.Env:
		return op, fmt.Errorf("DeploymentTarget %q: env %q and spec.environment %q differ: give one of them", op.Name, op.Env, env)
	}
	return op, nil
}

// targetAt returns the index in seq of op's deployment target, -1 for none: the target of
// op's name in its environment, or, when op names no environment, the only one of that name.
func (l *located) targetAt(seq *yaml.Node, op Operation) (int, error) {
	type match struct {
		at, line int
		env      string
	}
	env := op.Env
	if op.Op == OpAdd {
		env, _ = op.Spec["environment"].(string)
	}
	var all, in []match
	for i, t := range seq.Content {
		if scalar(lookup(t, "name")) != op.Name {
			continue
		}
		m := match{at: i, line: l.doc.lines + t.Line, env: scalar(lookup(t, "environment"))}
		all = append(all, m)
		if m.env == env || (env == "" && op.Op != OpAdd) {
			in = append(in, m)
		}
	}
	where := func(ms []match) string {
		var out []string
		for _, m := range ms {
			out = append(out, fmt.Sprintf("%s (line %d)", cmp.Or(m.env, `""`), m.line))
		}
		return strings.Join(out, ", ")
	}
	switch {
	case op.Op == OpAdd && len(in) > 0:
		return -1, fmt.Errorf("workload %s already has a deployment target %q in environment %s (%s:%d)",
			op.Workload, op.Name, cmp.Or(env, `""`), l.key, in[0].line)
	case op.Op == OpAdd:
		return -1, nil
	case len(in) == 1:
		return in[0].at, nil
	case len(in) == 0 && op.Env != "":
		err := fmt.Errorf("workload %s has no deployment target %q in environment %s", op.Workload, op.Name, op.Env)
		if len(all) > 0 {
			err = fmt.Errorf("%w: %s defines it for %s", err, l.key, where(all))
		}
		return -1, err
	case len(in) == 0:
		return -1, nil // editTargets says there is none
	}
	kind, name := l.doc.identity()
	d := controlplane.Diagnostic{Severity: controlplane.SeverityError, File: l.key.String(), Line: in[0].line, Kind: kind, Name: name,
		Path: "spec.deploymentTargets"}
	if op.Env == "" {
		var envs []string
		for _, m := range in {
			envs = append(envs, "--env "+cmp.Or(m.env, `""`))
		}
		d.Message = fmt.Sprintf("deployment target %q is defined for several environments: %s", op.Name, where(in))
		d.Hint = "name its environment: " + strings.Join(envs, " or ") + ` ("env" in an API operation)`
	} else {
		d.Message = fmt.Sprintf("deployment target %q is defined more than once for environment %s: %s", op.Name, op.Env, where(in))
		d.Hint = "remove the duplicate by hand first"
	}
	return -1, d
}

func targetNode(op Operation) (*yaml.Node, error) {
	t := map[string]any{"name": op.Name}
	for k, v := range op.Spec {
		t[k] = v
	}
	if len(op.Labels) > 0 {
		t["labels"] = op.Labels
	}
	return toNode(t)
}

// addEnvironment declares an environment with its GitOpsRepo (gitopsRepo, else that of the
// environment it promotes from or of the first declared one) and an unpinned BaseRepo.
func (ws *workspace) addEnvironment(op Operation, gitopsRepo string, annotations map[string]string) error {
	if err := checkName(op.Kind, op.Name); err != nil {
		return err
	}
	for _, e := range ws.envs {
		if e.Name == op.Name {
			return fmt.Errorf("environment %q is already declared", op.Name)
		}
	}
	spec := maps.Clone(op.Spec)
	if spec == nil {
		spec = map[string]any{}
	}
	if gitopsRepo == "" {
		gitopsRepo = ws.gitopsRepoOf(spec)
	}
	envBranch, envDir := op.Name, ""
	envFile := fileKey{ws.commonBranch(), ".environments/" + op.Name + ".yaml"}
	if ws.layout == controlplane.LayoutKalypso {
		spec["controlPlane"] = map[string]any{"repo": "", "branch": op.Name, "path": "."}
		if ws.g != nil && ws.g.Storer != nil {
			if _, err := ws.tree(envBranch); err != nil {
				return err
			} else if !ws.tips[envBranch].IsZero() {
				return fmt.Errorf("branch %q already exists: remove it or choose another name", envBranch)
			}
		}
	} else {
		envBranch, envDir = ws.commonBranch(), "environments/"+op.Name+"/"
		envFile = fileKey{envBranch, envDir + "environment.yaml"}
		spec["controlPlane"] = map[string]any{"repo": "", "branch": "", "path": "./" + strings.TrimSuffix(envDir, "/")}
	}
	meta := map[string]any{"name": op.Name}
	if len(op.Labels) > 0 {
		meta["labels"] = op.Labels
	}
	if len(annotations) > 0 {
		meta["annotations"] = annotations
	}
	env, err := toNode(map[string]any{"apiVersion": v1alpha1.APIVersion, "kind": v1alpha1.KindEnvironment, "metadata": meta, "spec": spec})
	if err != nil {
		return err
	}
	env.HeadComment = "The " + op.Name + " environment (written by fleetform add environment)."
	if err := ws.appendDoc(envFile, &yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{env}}); err != nil {
		return err
	}
	if gitopsRepo != "" {
		gitops, err := newDoc(v1alpha1.APIVersion, v1alpha1.KindGitOpsRepo, op.Name, nil,
			"Where `fleetform apply --env "+op.Name+"` writes the environment's GitOps tree.",
			map[string]any{"spec": map[string]any{"repo": gitopsRepo, "branch": op.Name, "path": "."}})
		if err != nil {
			return err
		}
		if err := ws.appendDoc(fileKey{envBranch, envDir + "gitops-repo.yaml"}, gitops); err != nil {
			return err
		}
	}
	base, err := newDoc(v1alpha1.APIVersion, v1alpha1.KindBaseRepo, v1alpha1.BaseRepoName, nil,
		"The common content this environment renders. No commit: it follows the tip until\n"+
			"its first promotion (fleetform promote --to "+op.Name+") pins one.",
		map[string]any{"spec": map[string]any{"repo": "", "branch": cmpOr(ws.main, "main"), "path": "."}})
	if err != nil {
		return err
	}
	return ws.appendDoc(fileKey{envBranch, envDir + controlplane.BaseRepoFile}, base)
}

func cmpOr(a, b string) string {
	if a != "" && a != "HEAD" {
		return a
	}
	return b
}

// gitopsRepoOf returns the GitOps repository of the environment spec promotes from, else
// of the first declared environment that has one.
func (ws *workspace) gitopsRepoOf(spec map[string]any) string {
	var from string
	if p, ok := spec["promotion"].(map[string]any); ok {
		from, _ = p["from"].(string)
	}
	names := []string{from}
	for _, e := range ws.envs {
		names = append(names, e.Name)
	}
	for _, n := range names {
		if n == "" {
			continue
		}
		if l, err := ws.find(v1alpha1.KindGitOpsRepo, n, n); err == nil && l != nil {
			if s := get(l.doc.root(), "spec"); s != nil {
				if r := get(s, "repo"); r != nil && r.Value != "" {
					return r.Value
				}
			}
		}
	}
	return ""
}

// removeEnvironment removes an environment's declaration and, in the folder layout, its
// folder. In the Kalypso layout its branch is left as it is (history).
func (ws *workspace) removeEnvironment(op Operation) error {
	if _, err := ws.envInfo(op.Name); err != nil {
		return err
	}
	if l, err := ws.find(v1alpha1.KindEnvironment, op.Name, ""); err != nil {
		return err
	} else if l != nil {
		l.doc.removed = true
		if err := ws.save(l); err != nil {
			return err
		}
	}
	if ws.layout == controlplane.LayoutKalypso {
		return nil
	}
	branch, dir := ws.envRoot(op.Name)
	files, err := ws.listAll(branch, dir)
	if err != nil {
		return err
	}
	for _, f := range files {
		ws.write(fileKey{branch, f}, nil)
	}
	return nil
}

// listAll lists every file under dir, YAML or not, with the changes.
func (ws *workspace) listAll(branch, dir string) ([]string, error) {
	seen, err := ws.files(branch, dir)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, f := range slices.Sorted(maps.Keys(seen)) {
		if seen[f] {
			out = append(out, f)
		}
	}
	return out, nil
}

// clusterTypeDefaults fills the templates a new cluster type does not name: the
// environment's defaults (annotations written by init), else the built-in ones.
func (ws *workspace) clusterTypeDefaults(spec map[string]any, env string) {
	var ann map[string]string
	if info, err := ws.envInfo(env); err == nil && info.Object != nil {
		ann = info.Object.Metadata.Annotations
	}
	for _, d := range []struct{ field, annotation, def string }{
		{"reconciler", AnnotationReconciler, DefaultReconciler},
		{"namespaceService", AnnotationNamespace, DefaultNamespace},
		{"configType", AnnotationConfig, DefaultConfig},
	} {
		if v, _ := spec[d.field].(string); v == "" {
			spec[d.field] = cmpOr(ann[d.annotation], d.def)
		}
	}
}

// resolveTarget finds the workload and target of a deployment target's full name
// (<workload>-<target>) among the Workloads of the common content the loader reads.
func (ws *workspace) resolveTarget(full string) (workload, target string, err error) {
	branch, files, _, err := ws.candidates(v1alpha1.KindWorkload, "")
	if err != nil {
		return "", "", err
	}
	for _, f := range files {
		data, ok, err := ws.read(fileKey{branch, f})
		if err != nil || !ok {
			return "", "", err
		}
		file, err := parseYAMLFile(data)
		if err != nil {
			continue
		}
		for _, d := range file.docs {
			kind, name := d.identity()
			if kind != v1alpha1.KindWorkload || !strings.HasPrefix(full, name+"-") {
				continue
			}
			seq := get(get(d.root(), "spec"), "deploymentTargets")
			if seq == nil {
				continue
			}
			for _, t := range seq.Content {
				if n := scalar(lookup(t, "name")); n != "" && name+"-"+n == full {
					return name, n, nil
				}
			}
		}
	}
	return "", "", fmt.Errorf("no deployment target %q among the workloads of the control plane (give --workload for one kept elsewhere)", full)
}

// editTargets adds, changes or removes the deployment target at index at (-1: none).
func editTargets(seq *yaml.Node, at int, op Operation) error {
	switch {
	case op.Op == OpAdd && at >= 0:
		return fmt.Errorf("workload %s already has a deployment target %q", op.Workload, op.Name)
	case op.Op != OpAdd && at < 0:
		return fmt.Errorf("workload %s has no deployment target %q", op.Workload, op.Name)
	case op.Op == OpRemove:
		seq.Content = slices.Delete(seq.Content, at, at+1)
		return nil
	case op.Op != OpAdd && op.Op != OpSet:
		return fmt.Errorf("op %q on DeploymentTarget: want add, set or remove", op.Op)
	}
	n, err := targetNode(op)
	if err != nil {
		return err
	}
	if op.Op == OpAdd {
		seq.Content = append(seq.Content, n)
		return nil
	}
	unset(n, "name")
	if err := throughAlias(seq, op.Name, seq.Content[at]); err != nil {
		return err
	}
	return mergeInto(seq.Content[at], n)
}
