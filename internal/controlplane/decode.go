package controlplane

import (
	"fmt"
	"reflect"
	"regexp"
	"strconv"
	"strings"

	yaml "go.yaml.in/yaml/v3"

	"github.com/fleetform/fleetform/api/v1alpha1"
	"github.com/fleetform/fleetform/internal/yamlnode"
)

// document is one decoded object of a YAML stream, before it is sorted into a Snapshot.
type document struct {
	kind   string
	name   string
	object any // pointer to a v1alpha1 kind; nil when broken
	source Source

	// broken marks a document that failed to decode (its problems are reported); kind, name
	// and labels hold what could be read of it ("" kind: not even that).
	broken      bool
	labels      map[string]string
	labelsKnown bool
}

// kindTypes maps apiVersion/kind to the Go type a document decodes into.
var kindTypes = map[string]reflect.Type{
	v1alpha1.APIVersion + "/" + v1alpha1.KindEnvironment:           reflect.TypeFor[v1alpha1.Environment](),
	v1alpha1.APIVersion + "/" + v1alpha1.KindClusterType:           reflect.TypeFor[v1alpha1.ClusterType](),
	v1alpha1.APIVersion + "/" + v1alpha1.KindWorkload:              reflect.TypeFor[v1alpha1.Workload](),
	v1alpha1.APIVersion + "/" + v1alpha1.KindDeploymentTarget:      reflect.TypeFor[v1alpha1.DeploymentTarget](),
	v1alpha1.APIVersion + "/" + v1alpha1.KindWorkloadRegistration:  reflect.TypeFor[v1alpha1.WorkloadRegistration](),
	v1alpha1.APIVersion + "/" + v1alpha1.KindSchedulingPolicy:      reflect.TypeFor[v1alpha1.SchedulingPolicy](),
	v1alpha1.APIVersion + "/" + v1alpha1.KindTemplate:              reflect.TypeFor[v1alpha1.Template](),
	v1alpha1.APIVersion + "/" + v1alpha1.KindConfigSchema:          reflect.TypeFor[v1alpha1.ConfigSchema](),
	v1alpha1.APIVersion + "/" + v1alpha1.KindGitOpsRepo:            reflect.TypeFor[v1alpha1.GitOpsRepo](),
	v1alpha1.APIVersion + "/" + v1alpha1.KindBaseRepo:              reflect.TypeFor[v1alpha1.BaseRepo](),
	"v1/" + v1alpha1.KindConfigMap:                                 reflect.TypeFor[v1alpha1.ConfigMap](),
	v1alpha1.FleetformAPIVersion + "/" + v1alpha1.KindAccessPolicy: reflect.TypeFor[v1alpha1.AccessPolicy](),
}

var yamlLineRE = regexp.MustCompile(`^line (\d+): `)

// shiftLines adds off to the line of every node of a tree (aliases are not followed: their
// targets are in the tree too).
func shiftLines(n *yaml.Node, off int) {
	n.Line += off
	for _, c := range n.Content {
		shiftLines(c, off)
	}
}

// splitYAMLErr returns the message of a YAML error without the "yaml: " and "line N: "
// prefixes, and the line (0 when the error has none). Multi-line unmarshal errors are reduced
// to their first entry.
func splitYAMLErr(err error) (string, int) {
	s := strings.TrimPrefix(err.Error(), "yaml: ")
	if rest, ok := strings.CutPrefix(s, "unmarshal errors:\n"); ok {
		s, _, _ = strings.Cut(strings.TrimSpace(rest), "\n")
	}
	m := yamlLineRE.FindStringSubmatch(s)
	if m == nil {
		return s, 0
	}
	line, _ := strconv.Atoi(m[1])
	msg := s[len(m[0]):]
	if parserProblems[msg] {
		line++ // the decoder reports its parser's errors with 0-based lines
	}
	return msg, line
}

// parserProblems are the messages of the YAML parser's errors (go.yaml.in/yaml/v3
// parserc.go), whose lines are 0-based; the scanner's are 1-based.
var parserProblems = map[string]bool{
	"did not find expected ',' or ']'":       true,
	"did not find expected ',' or '}'":       true,
	"did not find expected '-' indicator":    true,
	"did not find expected <document start>": true,
	"did not find expected <stream-start>":   true,
	"did not find expected key":              true,
	"did not find expected node content":     true,
	"found duplicate %TAG directive":         true,
	"found duplicate %YAML directive":        true,
	"found incompatible YAML document":       true,
	"found undefined tag handle":             true,
}

// decodeDocument decodes one document strictly. It returns nil for empty documents and for
// documents with errors.
func decodeDocument(root *yaml.Node, src Source) (*document, []Diagnostic) {
	if root.Kind != yaml.DocumentNode || len(root.Content) == 0 {
		return nil, nil
	}
	n := root.Content[0]
	src.Line = n.Line
	src.lines = map[string]int{}
	if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
		return nil, nil
	}
	if n.Kind != yaml.MappingNode {
		return brokenDocument(n, src, ""), []Diagnostic{src.Diag("", "a document must be a mapping with apiVersion and kind, not a "+nodeKind(n), "")}
	}
	apiVersion, kind, name := scalarAt(n, "apiVersion"), scalarAt(n, "kind"), scalarAt(n, "metadata", "name")
	src.kind, src.name = kind, name
	for i := 0; i+1 < len(n.Content); i += 2 { // so that kind and apiVersion errors have their line
		if k := n.Content[i]; k.Kind == yaml.ScalarNode {
			if _, ok := src.lines[k.Value]; !ok {
				src.lines[k.Value] = k.Line
			}
		}
	}
	if apiVersion == "" || kind == "" {
		return brokenDocument(n, src, ""), []Diagnostic{src.Diag("", "document has no apiVersion or kind",
			"every document must be a fleetform object; list files that are not in .sourceignore")}
	}
	t, ok := kindTypes[apiVersion+"/"+kind]
	if !ok {
		return brokenDocument(n, src, kind), []Diagnostic{unknownKind(src, apiVersion, kind)}
	}
	w := &strictWalker{src: &src}
	w.walk(n, t, "")
	if name == "" {
		w.diags = append(w.diags, src.Diag("metadata.name", "name is required", ""))
	}
	if len(w.diags) > 0 {
		return brokenDocument(n, src, kind), w.diags
	}
	obj := reflect.New(t)
	if err := yamlnode.Decode(n, obj.Interface()); err != nil {
		msg, line := splitYAMLErr(err)
		d := src.Diag("", msg, "")
		if line > 0 {
			d.Line = line
		}
		return brokenDocument(n, src, kind), []Diagnostic{d}
	}
	return &document{kind: kind, name: name, object: obj.Interface(), source: src}, nil
}

// brokenDocument records what can be read of a document that failed: its kind, name and
// labels, so that the objects it could affect are known.
func brokenDocument(n *yaml.Node, src Source, kind string) *document {
	d := &document{kind: kind, name: src.name, source: src, broken: true}
	d.labels, d.labelsKnown = readLabels(n)
	return d
}

// readLabels reads metadata.labels of a document node, if it is a map of scalars.
func readLabels(n *yaml.Node) (map[string]string, bool) {
	if n.Kind != yaml.MappingNode {
		return nil, false
	}
	meta := valueAt(n, "metadata")
	if meta == nil {
		return map[string]string{}, true
	}
	if meta.Kind != yaml.MappingNode {
		return nil, false
	}
	labels := valueAt(meta, "labels")
	out := map[string]string{}
	if labels == nil || labels.Tag == "!!null" {
		return out, true
	}
	if labels.Kind != yaml.MappingNode {
		return nil, false
	}
	for i := 0; i+1 < len(labels.Content); i += 2 {
		k, v := labels.Content[i], labels.Content[i+1]
		if k.Kind != yaml.ScalarNode || v.Kind != yaml.ScalarNode {
			return nil, false
		}
		out[k.Value] = v.Value
	}
	return out, true
}

func valueAt(n *yaml.Node, key string) *yaml.Node {
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			v := n.Content[i+1]
			if v.Kind == yaml.AliasNode {
				v = v.Alias
			}
			return v
		}
	}
	return nil
}

func unknownKind(src Source, apiVersion, kind string) Diagnostic {
	for k := range kindTypes {
		if v, kd := cutLast(k, "/"); kd == kind {
			return src.Diag("apiVersion", fmt.Sprintf("kind %s has apiVersion %s, not %s", kind, v, apiVersion),
				fmt.Sprintf("set apiVersion: %s", v))
		}
	}
	if kind == "Assignment" || kind == "AssignmentPackage" {
		return src.Diag("kind", fmt.Sprintf("%s is what Kalypso's scheduler writes (its output), not an input of the control plane", kind),
			"remove it: fleetform computes the assignments from the SchedulingPolicies (see fleetform schedule), "+
				"or list the file in .sourceignore")
	}
	kinds := map[string]reflect.Type{}
	for k, t := range kindTypes {
		_, kd := cutLast(k, "/")
		kinds[kd] = t
	}
	if hint := suggest(kind, kinds); strings.HasPrefix(hint, "did you mean") {
		return src.Diag("kind", fmt.Sprintf("unknown kind %s (apiVersion %s)", kind, apiVersion), hint)
	}
	return src.Diag("kind", fmt.Sprintf("unknown kind %s (apiVersion %s)", kind, apiVersion),
		"fleetform reads Environment, ClusterType, Workload, DeploymentTarget, WorkloadRegistration, "+
			"SchedulingPolicy, Template, ConfigSchema, GitOpsRepo, BaseRepo and ConfigMap; "+
			"keep other files out of the control plane or list them in .sourceignore")
}

func cutLast(s, sep string) (before, after string) {
	i := strings.LastIndex(s, sep)
	if i < 0 {
		return s, ""
	}
	return s[:i], s[i+len(sep):]
}

// scalarAt returns the scalar value at a key path of a mapping node, or "". Aliases are
// followed, as decoding does.
func scalarAt(n *yaml.Node, keys ...string) string {
	for _, k := range keys {
		if n.Kind == yaml.AliasNode {
			n = n.Alias
		}
		if n.Kind != yaml.MappingNode {
			return ""
		}
		var next *yaml.Node
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == k {
				next = n.Content[i+1]
			}
		}
		if next == nil {
			return ""
		}
		n = next
	}
	if n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	if n.Kind != yaml.ScalarNode {
		return ""
	}
	return n.Value
}
