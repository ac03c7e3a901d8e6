package app

import (
	"fmt"
	"strings"

	yaml "go.yaml.in/yaml/v3"
	sigsyaml "sigs.k8s.io/yaml"
)

// helmValues reads a values file as Helm v3 reads chart values and values files (the chart
// loader, chartutil.ReadValues, helm -f: sigs.k8s.io/yaml into map[string]any): YAML 1.1
// with yaml.v2 (y, yes, on and their capitalised forms are true, n, no, off false; 0x1F,
// 0o17, 010 and 1_000 are integers; merge keys << are expanded; timestamps stay strings),
// then JSON: every number is a float64 and every key a string ("on:" is "true", "0x10:" is
// "16"). root is the file's top-level mapping, which finds the line of a value Helm cannot
// read (.inf, .nan: JSON has no such numbers) for the error.
func helmValues(file string, data []byte, root *yaml.Node) (map[string]any, error) {
	var m map[string]any
	if err := sigsyaml.Unmarshal(data, &m); err != nil {
		if n := notJSONNumber(root); n != nil {
			return nil, fmt.Errorf("%s:%d: %s is an infinite or not-a-number float in YAML 1.1, which Helm cannot read (its values go through JSON, which has no such numbers): quote it (%q) for a string",
				file, n.Line, n.Value, n.Value)
		}
		return nil, fmt.Errorf("%s: Helm cannot read this values file (it reads YAML 1.1, then JSON): %w", file, err)
	}
	return m, nil
}

// notJSONNumber returns the first value below n that yaml.v2 reads as an infinity or a NaN
// (an untagged plain .inf, -.Inf, .nan…), or nil.
func notJSONNumber(n *yaml.Node) *yaml.Node {
	if n == nil {
		return nil
	}
	switch n.Kind {
	case yaml.ScalarNode:
		if n.Style == 0 && isInfOrNaN(n.Value) {
			return n
		}
	case yaml.MappingNode:
		for i := 1; i < len(n.Content); i += 2 {
			if found := notJSONNumber(n.Content[i]); found != nil {
				return found
			}
		}
	case yaml.SequenceNode, yaml.DocumentNode:
		for _, c := range n.Content {
			if found := notJSONNumber(c); found != nil {
				return found
			}
		}
	}
	return nil
}

// isInfOrNaN reports whether yaml.v2 resolves a plain scalar to an infinity or a NaN.
func isInfOrNaN(s string) bool {
	s = strings.TrimPrefix(strings.TrimPrefix(s, "+"), "-")
	switch s {
	case ".inf", ".Inf", ".INF", ".nan", ".NaN", ".NAN":
		return true
	}
	return false
}

// entry is a key of a mapping node and its value.
type entry struct{ key, value *yaml.Node }

// maxMergeDepth bounds the merge keys followed into merged mappings.
const maxMergeDepth = 64

// keyNodes indexes the entries of a mapping node by the key Helm reads (helmKey), as
// yaml.v2 decodes a mapping: in order, a later entry replaces an earlier one, and a merge
// key (<<) sets the keys of the mapping it names over the earlier entries (of a list of
// mappings, the first one's win). n may be nil or not a mapping: the index is empty.
func keyNodes(n *yaml.Node) map[string]entry {
	out := map[string]entry{}
	addEntries(out, n, 0)
	return out
}

func addEntries(out map[string]entry, n *yaml.Node, depth int) {
	if n == nil || depth > maxMergeDepth {
		return
	}
	if n = resolve(n); n.Kind != yaml.MappingNode {
		return
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if isMergeKey(k) {
			mergeEntries(out, resolve(v), depth+1)
			continue
		}
		if name, ok := helmKey(k); ok {
			out[name] = entry{key: k, value: v}
		}
	}
}

// mergeEntries adds the entries of the mapping (or the list of mappings) a merge key names.
func mergeEntries(out map[string]entry, v *yaml.Node, depth int) {
	if v.Kind != yaml.SequenceNode {
		addEntries(out, v, depth)
		return
	}
	for i := len(v.Content) - 1; i >= 0; i-- {
		addEntries(out, v.Content[i], depth)
	}
}

// isMergeKey reports whether yaml.v2 reads a key as a merge: a plain <<, or one tagged
// !!merge.
func isMergeKey(k *yaml.Node) bool {
	return k.Kind == yaml.ScalarNode && k.Value == "<<" && (k.Style == 0 || k.Tag == "!!merge")
}

// helmKey is the key Helm reads for a mapping key node: a plain scalar resolved as yaml.v2
// resolves it (on is true, 0x10 is 16), made a string as sigs.k8s.io/yaml makes it ("true",
// "16"). It is false for a key Helm cannot read (null, a number beyond int64, a mapping).
func helmKey(k *yaml.Node) (string, bool) {
	if k.Kind != yaml.ScalarNode {
		return "", false
	}
	if k.Style&^yaml.TaggedStyle != 0 || !mayResolve(k.Value) {
		return k.Value, true
	}
	text := k.Value
	if k.Style == yaml.TaggedStyle {
		text = k.Tag + " " + text
	}
	var m map[string]any
	if err := sigsyaml.Unmarshal([]byte(text+": 0\n"), &m); err != nil || len(m) != 1 {
		return "", false
	}
	for name := range m {
		return name, true
	}
	return "", false
}

// mayResolve reports whether yaml.v2 may read a plain scalar as something else than a
// string: it starts with a sign, a digit or a dot (a number, a timestamp), is empty (null),
// or is one of the words of at most five letters of its table (y, no, On, false, null, ~…).
// A scalar of several lines is a string.
func mayResolve(s string) bool {
	if strings.Contains(s, "\n") {
		return false
	}
	if s == "" || strings.IndexByte("+-.0123456789", s[0]) >= 0 {
		return true
	}
	return len(s) <= 5 && strings.IndexByte("yYnNtTfFoO~", s[0]) >= 0
}
