package authoring

import (
	"fmt"
	"path"
	"slices"
	"strings"

	yaml "go.yaml.in/yaml/v3"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/fleetform/fleetform/api/v1alpha1"
	"github.com/fleetform/fleetform/internal/controlplane"
)

// Operations.
const (
	OpAdd    = "add"
	OpSet    = "set"
	OpUnset  = "unset"
	OpRemove = "remove"
)

// KindDeploymentTarget is a deployment target written inside its Workload.
const KindDeploymentTarget = "DeploymentTarget"

// Operation is one change to the control plane, as the CLI builds it and the API receives
// it: {"op":"add","kind":"ClusterType","name":"edge","env":"dev","labels":{…},"spec":{…}}.
// Labels are the object's metadata labels and Spec its spec, as in the YAML.
type Operation struct {
	// Op is add, set (labels and spec merged into the object; config values), unset (config
	// values) or remove.
	Op string `json:"op"`
	// Kind is Environment, ClusterType, Workload, DeploymentTarget, SchedulingPolicy,
	// WorkloadRegistration or ConfigMap.
	Kind string `json:"kind"`
	Name string `json:"name,omitempty"`
	// Env is the environment of environment-scoped kinds (cluster types, policies, config),
	// and that of a deployment target (needed when its name is used in several).
	Env    string            `json:"env,omitempty"`
	Labels map[string]string `json:"labels,omitempty"`
	Spec   map[string]any    `json:"spec,omitempty"`
	// Workload is the workload a DeploymentTarget belongs to.
	Workload string `json:"workload,omitempty"`
	// Data are config values to set (strings, or structured values written as YAML text).
	Data map[string]any `json:"data,omitempty"`
	// Keys are the config keys to unset.
	Keys []string `json:"keys,omitempty"`
	// Scope is the precedence level of config values (set and unset of a ConfigMap).
	Scope *ConfigScope `json:"scope,omitempty"`
}

// ConfigScope is the precedence level a config value is written at: exactly one field.
type ConfigScope struct {
	ClusterType      string `json:"clusterType,omitempty"`
	Workload         string `json:"workload,omitempty"`
	DeploymentTarget string `json:"deploymentTarget,omitempty"`
	// Selector is label-matched: KEY=VALUE pairs (kubectl syntax, equalities only).
	Selector        string `json:"selector,omitempty"`
	EnvironmentWide bool   `json:"environmentWide,omitempty"`
}

// Describe names the operation for commit messages: "add ClusterType edge in dev".
func (op Operation) Describe() string {
	s := op.Op + " " + op.Kind
	if op.Name != "" {
		s += " " + op.Name
	}
	if op.Kind == KindDeploymentTarget && op.Workload != "" {
		s += " of " + op.Workload
	}
	if op.Scope != nil {
		s += " " + strings.Join(op.keys(), ",") + " at " + op.Scope.describe()
	}
	if op.Env != "" {
		s += " in " + op.Env
	}
	return s
}

func (op Operation) keys() []string {
	if op.Op == OpUnset {
		return op.Keys
	}
	return sortedKeys(op.Data)
}

func (s *ConfigScope) describe() string {
	switch {
	case s.ClusterType != "":
		return "cluster type " + s.ClusterType
	case s.Workload != "":
		return "workload " + s.Workload
	case s.DeploymentTarget != "":
		return "deployment target " + s.DeploymentTarget
	case s.Selector != "":
		return "labels " + s.Selector
	}
	return "environment level"
}

// scopeOf says where a kind lives: true for an environment's own content.
func scopeOf(kind string) (envScoped bool, err error) {
	switch kind {
	case v1alpha1.KindClusterType, v1alpha1.KindSchedulingPolicy, v1alpha1.KindConfigMap,
		v1alpha1.KindGitOpsRepo, v1alpha1.KindBaseRepo:
		return true, nil
	case v1alpha1.KindWorkload, v1alpha1.KindWorkloadRegistration, KindDeploymentTarget, v1alpha1.KindEnvironment:
		return false, nil
	}
	return false, fmt.Errorf("kind %q: want Environment, ClusterType, Workload, DeploymentTarget, SchedulingPolicy, WorkloadRegistration or ConfigMap", kind)
}

// folderOf is the conventional folder of a kind, inside its scope.
var folderOf = map[string]string{
	v1alpha1.KindClusterType:          "cluster-types/",
	v1alpha1.KindSchedulingPolicy:     "scheduling/",
	v1alpha1.KindConfigMap:            "config/",
	v1alpha1.KindWorkload:             "workloads/",
	v1alpha1.KindWorkloadRegistration: "registrations/",
}

// located is a document found in the workspace.
type located struct {
	key  fileKey
	file *yamlFile
	doc  *yamlDoc
}

// scopeRoot returns where a kind's documents are searched and written.
func (ws *workspace) scopeRoot(kind, env string) (branch, dir string, exclude []string, err error) {
	envScoped, err := scopeOf(kind)
	if err != nil {
		return "", "", nil, err
	}
	if envScoped {
		if _, err := ws.envInfo(env); err != nil {
			return "", "", nil, err
		}
		branch, dir = ws.envRoot(env)
		return branch, dir, nil, nil
	}
	if ws.layout == controlplane.LayoutKalypso {
		return ws.commonBranch(), "", []string{".environments/"}, nil
	}
	return ws.commonBranch(), "", []string{"environments/"}, nil
}

// place is a part of a branch the loader reads as one section: the folder dir ("" for the
// whole branch) minus the folders in exclude, with the loader's rootExempt.
type place struct {
	dir        string
	rootExempt bool
	exclude    []string
}

// candidates lists, sorted, the YAML files where the documents of kind are searched in the
// scope (env): read, those the loader reads there, and left, those Flux's default exclusions
// or a .sourceignore leave out. The places, and what .sourceignore may exclude in them, are
// the loader's (controlplane's layout.go): the environments' declarations in .environments/
// of main (Kalypso) or in environments/ and the common content (folder layout), the folder
// of an environment, the common content.
func (ws *workspace) candidates(kind, env string) (branch string, read, left []string, err error) {
	var places []place
	switch {
	case kind == v1alpha1.KindEnvironment && ws.layout == controlplane.LayoutKalypso:
		branch, places = ws.commonBranch(), []place{{dir: ".environments/", rootExempt: true}}
	case kind == v1alpha1.KindEnvironment:
		branch, places = ws.commonBranch(), []place{{dir: "environments/", rootExempt: true}, {exclude: []string{"environments/"}}}
	default:
		var p place
		if branch, p.dir, p.exclude, err = ws.scopeRoot(kind, env); err != nil {
			return "", nil, nil, err
		}
		places = []place{p}
	}
	for _, p := range places {
		r, l, err := ws.list(branch, p.dir, p.rootExempt, p.exclude...)
		if err != nil {
			return "", nil, nil, err
		}
		read, left = append(read, r...), append(left, l...)
	}
	slices.Sort(read)
	slices.Sort(left)
	return branch, read, left, nil
}

// find looks for the document of kind and name in the files of the scope that the loader
// reads; nil when there is none. An object found in several such files is refused: the
// loader reports the duplicate, and which one is meant is not known here.
func (ws *workspace) find(kind, name, env string) (*located, error) {
	branch, files, _, err := ws.candidates(kind, env)
	if err != nil {
		return nil, err
	}
	var found []*located
	for _, f := range files {
		l, err := ws.findIn(fileKey{branch, f}, kind, name)
		if err != nil {
			return nil, err
		} else if l != nil {
			found = append(found, l)
		}
	}
	switch len(found) {
	case 0:
		return nil, nil
	case 1:
		return found[0], nil
	}
	where := make([]string, len(found))
	for i, l := range found {
		where[i] = fmt.Sprintf("%s:%d", l.key, l.line())
	}
	return nil, controlplane.Diagnostic{Severity: controlplane.SeverityError, File: found[0].key.String(), Line: found[0].line(),
		Kind: kind, Name: name, Message: fmt.Sprintf("is defined in %d files: %s", len(found), strings.Join(where, ", ")),
		Hint: "keep one of them (every one is read: list an old copy's folder in .sourceignore to keep it unread), or make the change by hand"}
}

// findLeftOut looks for the document of kind and name in the files of the scope that the
// loader does not read (an old copy in a folder .sourceignore lists); nil when there is none.
// Such a copy is never edited: it has no effect.
func (ws *workspace) findLeftOut(kind, name, env string) (*located, error) {
	branch, _, files, err := ws.candidates(kind, env)
	if err != nil {
		return nil, err
	}
	for _, f := range files {
		if l, err := ws.findIn(fileKey{branch, f}, kind, name); err != nil || l != nil {
			return l, err
		}
	}
	return nil, nil
}

// line is the line of the file where the document's content starts.
func (l *located) line() int { return l.doc.lines + l.doc.root().Line }

// findIn looks for the document in one file.
func (ws *workspace) findIn(k fileKey, kind, name string) (*located, error) {
	data, ok, err := ws.read(k)
	if err != nil || !ok {
		return nil, err
	}
	f, err := parseYAMLFile(data)
	if err != nil {
		return nil, nil //nolint:nilerr // a file that does not parse holds nothing to edit; validation reports it
	}
	for _, d := range f.docs {
		if k2, n2 := d.identity(); k2 == kind && n2 == name {
			return &located{key: k, file: f, doc: d}, nil
		}
	}
	return nil, nil
}

// refusal is err located in l's document when it is an aliasError (file, line, field).
func (l *located) refusal(err error) error { return l.doc.refusal(l.key.String(), err) }

// save writes an edited file back into the workspace (removing it when it is empty). Edits
// that change or remove a value an alias refers to are refused.
func (ws *workspace) save(l *located) error {
	for _, d := range l.file.docs {
		if err := d.checkAliases(l.key.String()); err != nil {
			return err
		}
	}
	if l.file.empty() {
		ws.write(l.key, nil)
		return nil
	}
	b, err := l.file.bytes()
	if err != nil {
		return err
	}
	ws.write(l.key, b)
	return nil
}

// appendDoc adds a document to a file (created when absent).
func (ws *workspace) appendDoc(k fileKey, n *yaml.Node) error {
	data, ok, err := ws.read(k)
	if err != nil {
		return err
	}
	f := &yamlFile{}
	if ok {
		if f, err = parseYAMLFile(data); err != nil {
			return fmt.Errorf("%s: %w", k, err)
		}
	}
	f.appendDoc(n)
	return ws.save(&located{key: k, file: f})
}

// newDoc builds a document: apiVersion, kind, metadata (name, labels), then the body's keys.
func newDoc(apiVersion, kind, name string, labels map[string]string, comment string, body map[string]any) (*yaml.Node, error) {
	meta := map[string]any{"name": name}
	if len(labels) > 0 {
		meta["labels"] = labels
	}
	top := map[string]any{"apiVersion": apiVersion, "kind": kind, "metadata": meta}
	for k, v := range body {
		top[k] = v
	}
	n, err := toNode(top)
	if err != nil {
		return nil, err
	}
	n.HeadComment = comment
	return &yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{n}}, nil
}

// CheckName refuses names that are not DNS-1123 subdomains.
func CheckName(kind, name string) error { return checkName(kind, name) }

// checkName refuses names that are not DNS-1123 subdomains before anything is read.
func checkName(kind, name string) error {
	if name == "" {
		return fmt.Errorf("%s: a name is required", kind)
	}
	if errs := validation.IsDNS1123Subdomain(name); len(errs) > 0 {
		return fmt.Errorf("%s name %q: %s (use lowercase letters, digits, '-' and '.')", kind, name, strings.Join(errs, "; "))
	}
	return nil
}

// fileFor is the conventional file of a new object, refused when the loader would not read
// it.
func (ws *workspace) fileFor(kind, name, env string) (fileKey, error) {
	branch, dir, _, err := ws.scopeRoot(kind, env)
	if err != nil {
		return fileKey{}, err
	}
	k := fileKey{branch, path.Join(dir, folderOf[kind], name+".yaml")}
	if _, delivered, err := ws.delivered(branch, dir, false); err != nil {
		return fileKey{}, err
	} else if !delivered(k.path) {
		return fileKey{}, controlplane.Diagnostic{Severity: controlplane.SeverityError, File: k.String(), Kind: kind, Name: name,
			Message: "is where a new " + kind + " is written, and the control plane does not read that file (.sourceignore or Flux's default exclusions leave it out)",
			Hint:    "change .sourceignore so that it does not list " + k.path + ", or add the object by hand in a file that is read"}
	}
	return k, nil
}
