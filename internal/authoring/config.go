package authoring

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"regexp"
	"slices"
	"strings"

	yaml "go.yaml.in/yaml/v3"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/fleetform/fleetform/api/v1alpha1"
	"github.com/fleetform/fleetform/internal/yamlnode"
)

// Labels of the precedence levels (what compose matches a ConfigMap's labels against).
const (
	labelClusterType      = "cluster-type"
	labelWorkload         = "workload"
	labelDeploymentTarget = "deployment-target"
)

// LevelLabels are the labels of the ConfigMap of a precedence level, and the name of a new
// one.
func LevelLabels(s *ConfigScope) (labels map[string]string, name string, err error) {
	labels = map[string]string{v1alpha1.LabelPlatformConfig: "true"}
	n := 0
	for _, set := range []bool{s.ClusterType != "", s.Workload != "", s.DeploymentTarget != "", s.Selector != "", s.EnvironmentWide} {
		if set {
			n++
		}
	}
	if n != 1 {
		return nil, "", fmt.Errorf("config scope: give exactly one of cluster type, workload, deployment target, selector or environment-wide (got %d)", n)
	}
	switch {
	case s.ClusterType != "":
		labels[labelClusterType], name = s.ClusterType, "cluster-type-"+s.ClusterType
	case s.Workload != "":
		labels[labelWorkload], name = s.Workload, "workload-"+s.Workload
	case s.DeploymentTarget != "":
		labels[labelDeploymentTarget], name = s.DeploymentTarget, "deployment-target-"+s.DeploymentTarget
	case s.Selector != "":
		sel, err := ParseSelector(s.Selector)
		if err != nil {
			return nil, "", err
		}
		if len(sel.MatchExpressions) > 0 || len(sel.MatchLabels) == 0 {
			return nil, "", fmt.Errorf("config selector %q: config maps match labels by equality: use KEY=VALUE pairs only", s.Selector)
		}
		parts := []string{"labels"}
		for _, k := range slices.Sorted(maps.Keys(sel.MatchLabels)) {
			labels[k] = sel.MatchLabels[k]
			parts = append(parts, k, sel.MatchLabels[k])
		}
		name = nameFrom(strings.Join(parts, "-"))
	default:
		name = "environment"
	}
	return labels, name, nil
}

var notNameChars = regexp.MustCompile(`[^a-z0-9-]+`)

// nameFrom makes a DNS-1123 name of s.
func nameFrom(s string) string {
	s = strings.Trim(notNameChars.ReplaceAllString(strings.ToLower(s), "-"), "-")
	return strings.TrimRight(s[:min(len(s), 63)], "-")
}

// findLevel returns the ConfigMap of env whose labels are exactly labels (the last by
// name when several are) among the files of env the loader reads, or nil.
func (ws *workspace) findLevel(env string, labels map[string]string) (*located, error) {
	branch, files, _, err := ws.candidates(v1alpha1.KindConfigMap, env)
	if err != nil {
		return nil, err
	}
	var found *located
	var foundName string
	for _, f := range files {
		k := fileKey{branch, f}
		data, ok, err := ws.read(k)
		if err != nil || !ok {
			return nil, err
		}
		file, err := parseYAMLFile(data)
		if err != nil {
			continue // reported by validation
		}
		for _, d := range file.docs {
			kind, name := d.identity()
			if kind != v1alpha1.KindConfigMap || !maps.Equal(docLabels(d), labels) {
				continue
			}
			if found == nil || name >= foundName {
				found, foundName = &located{key: k, file: file, doc: d}, name
			}
		}
	}
	return found, nil
}

func docLabels(d *yamlDoc) map[string]string {
	out := map[string]string{}
	ls := get(get(d.root(), "metadata"), "labels")
	if ls == nil || ls.Kind != yaml.MappingNode {
		return out
	}
	for i := 0; i+1 < len(ls.Content); i += 2 {
		out[ls.Content[i].Value] = ls.Content[i+1].Value
	}
	return out
}

// config sets or unsets values in the ConfigMap of a precedence level.
func (ws *workspace) config(op Operation) error {
	labels, name, err := LevelLabels(op.Scope)
	if err != nil {
		return err
	}
	l, err := ws.findLevel(op.Env, labels)
	if err != nil {
		return err
	}
	switch op.Op {
	case OpSet, OpAdd:
		if len(op.Data) == 0 {
			return fmt.Errorf("set config: no KEY=VALUE given")
		}
		for _, k := range sortedKeys(op.Data) {
			if errs := validation.IsConfigMapKey(k); len(errs) > 0 {
				return fmt.Errorf("set config: key %q is not a valid config key: %s (letters, digits, '-', '_' and '.')", k, strings.Join(errs, "; "))
			}
		}
		if l == nil {
			return ws.add(Operation{Op: OpAdd, Kind: v1alpha1.KindConfigMap, Name: name, Env: op.Env, Labels: labels, Data: op.Data})
		}
		data, err := ensureMap(l.doc.root(), "data")
		if err != nil {
			return err
		}
		for _, k := range sortedKeys(op.Data) {
			n, err := valueNode(op.Data[k])
			if err != nil {
				return fmt.Errorf("%s: %w", k, err)
			}
			set(data, k, n)
		}
	case OpUnset, OpRemove:
		if len(op.Keys) == 0 {
			return fmt.Errorf("unset config: no KEY given")
		}
		data := get(l.rootOrNil(), "data")
		for _, k := range op.Keys {
			if data == nil || !unset(data, k) {
				return fmt.Errorf("%s is not set at %s in %s", k, op.Scope.describe(), op.Env)
			}
		}
		if len(data.Content) == 0 {
			l.doc.removed = true
		}
	default:
		return fmt.Errorf("op %q on config values: want set or unset", op.Op)
	}
	l.doc.edited = true
	return ws.save(l)
}

func (l *located) rootOrNil() *yaml.Node {
	if l == nil {
		return nil
	}
	return l.doc.root()
}

func sortedKeys(m map[string]any) []string { return slices.Sorted(maps.Keys(m)) }

// valueNode is a config value as a ConfigMap's data holds it: a string (quoted where YAML
// 1.1 would read a boolean), or, for a structured value (a list or a map, given as YAML or
// JSON text or as data), its YAML text in a literal block, which compose reads back as
// structured.
func valueNode(v any) (*yaml.Node, error) {
	s, isString := v.(string)
	var n yaml.Node
	if isString {
		if !structured(s, &n) {
			return strValue(s), nil
		}
	} else if err := n.Encode(v); err != nil {
		return nil, err
	}
	clearStyles(&n)
	text, err := yamlnode.Encode(&n)
	if err != nil {
		return nil, err
	}
	if !isString && n.Kind == yaml.ScalarNode {
		return strValue(strings.TrimSpace(string(text))), nil
	}
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: string(text), Style: yaml.LiteralStyle}, nil
}

// strValue is the node of a string value, quoted where a YAML 1.1 reader (kubectl, Kalypso)
// would read a boolean (NO, on, y).
func strValue(s string) *yaml.Node {
	n := str(s)
	yamlnode.QuoteString(n)
	return n
}

// structured reports whether s is YAML text of one list or map, whole, and decodes it into
// n. Anything else ([INFO] started: a list, then more text) is a plain string.
func structured(s string, n *yaml.Node) bool {
	dec := yaml.NewDecoder(strings.NewReader(s))
	if err := dec.Decode(n); err != nil || len(n.Content) == 0 ||
		(n.Content[0].Kind != yaml.MappingNode && n.Content[0].Kind != yaml.SequenceNode) {
		return false
	}
	var more yaml.Node
	return errors.Is(dec.Decode(&more), io.EOF)
}

// clearStyles turns flow (JSON) style into block style, and quotes strings only where a
// reader needs it: where YAML 1.2 would read another type (yaml.v3 does that), or YAML 1.1
// a boolean.
func clearStyles(n *yaml.Node) {
	if n.Kind == yaml.MappingNode || n.Kind == yaml.SequenceNode || n.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle) != 0 {
		n.Style = 0
	}
	yamlnode.QuoteString(n)
	for _, c := range n.Content {
		clearStyles(c)
	}
}
