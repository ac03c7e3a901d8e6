package controlplane

import (
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"

	yaml "go.yaml.in/yaml/v3"
)

// maxAliasNodes bounds the nodes the strict walk visits through aliases, so that alias
// bombs cannot make it loop for long. The document itself is bounded by the file size.
const maxAliasNodes = 1 << 16

// maxDocDiags bounds the diagnostics of one document: aliases can repeat one mistake a
// million times.
const maxDocDiags = 50

// strictWalker checks a YAML node tree against a Go type before decoding: unknown or
// misspelled fields, wrong shapes and unquoted non-strings where strings are required are
// reported with their line, and every field's line is recorded for later diagnostics.
type strictWalker struct {
	src       *Source
	diags     []Diagnostic
	aliased   int                                      // nodes visited through aliases
	inAlias   int                                      // depth of aliases being walked
	aliasLine int                                      // line of the outermost alias being walked
	fields    map[reflect.Type]map[string]reflect.Type // yamlFields, cached
}

func (w *strictWalker) fail(line int, path, msg, hint string) {
	if len(w.diags) > maxDocDiags {
		return
	}
	if len(w.diags) == maxDocDiags {
		msg, hint = fmt.Sprintf("too many errors in this document; only the first %d are shown", maxDocDiags), ""
	}
	d := w.src.Diag(path, msg, hint)
	d.Line = line
	w.diags = append(w.diags, d)
}

// spend counts one node of the walk and reports whether the walk may go on: not once the
// document's aliases expand too far or it has too many errors.
func (w *strictWalker) spend(n *yaml.Node, path string) bool {
	if n.Kind == yaml.AliasNode || w.inAlias > 0 {
		if w.aliased++; w.aliased > maxAliasNodes {
			if w.aliased == maxAliasNodes+1 {
				line := w.aliasLine
				if w.inAlias == 0 {
					line = n.Line
				}
				w.fail(line, path, fmt.Sprintf("aliases expand to more than %d nodes", maxAliasNodes), "")
			}
			return false
		}
	}
	return len(w.diags) <= maxDocDiags
}

func (w *strictWalker) enterAlias(n *yaml.Node) {
	if w.inAlias == 0 {
		w.aliasLine = n.Line
	}
	w.inAlias++
}

func (w *strictWalker) walk(n *yaml.Node, t reflect.Type, path string) {
	if !w.spend(n, path) {
		return
	}
	if n.Kind == yaml.AliasNode {
		w.enterAlias(n)
		defer func() { w.inAlias-- }()
		n = n.Alias
	}
	if path != "" {
		if _, ok := w.src.lines[path]; !ok {
			w.src.lines[path] = n.Line
		}
	}
	if n.Tag == "!!null" {
		return
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Struct:
		w.walkStruct(n, t, path)
	case reflect.Map:
		w.walkMap(n, t, path)
	case reflect.Slice:
		w.walkSlice(n, t, path)
	case reflect.String:
		if n.Kind != yaml.ScalarNode {
			w.fail(n.Line, path, fmt.Sprintf("must be a string, not a %s", nodeKind(n)), "")
		} else if n.Tag != "!!str" && n.Style == 0 {
			w.fail(n.Line, path, fmt.Sprintf("must be a string, got %s %s", strings.TrimPrefix(n.Tag, "!!"), n.Value),
				fmt.Sprintf("quote it: %q", n.Value))
		}
	case reflect.Interface:
		// any: accepted as is
	default:
		w.walkScalar(n, t, path)
	}
}

// scalarTags are the YAML tags a Go scalar kind decodes from.
var scalarTags = map[reflect.Kind][]string{
	reflect.Bool: {"!!bool"}, reflect.Int: {"!!int"}, reflect.Int8: {"!!int"}, reflect.Int16: {"!!int"},
	reflect.Int32: {"!!int"}, reflect.Int64: {"!!int"}, reflect.Uint: {"!!int"}, reflect.Uint8: {"!!int"},
	reflect.Uint16: {"!!int"}, reflect.Uint32: {"!!int"}, reflect.Uint64: {"!!int"},
	reflect.Float32: {"!!float", "!!int"}, reflect.Float64: {"!!float", "!!int"},
}

var scalarNames = map[string]string{"!!bool": "a boolean", "!!int": "an integer", "!!float": "a number"}

func (w *strictWalker) walkScalar(n *yaml.Node, t reflect.Type, path string) {
	tags, known := scalarTags[t.Kind()]
	if n.Kind != yaml.ScalarNode {
		w.fail(n.Line, path, fmt.Sprintf("must be a %s, not a %s", t.Kind(), nodeKind(n)), "")
		return
	}
	if known && !slices.Contains(tags, n.ShortTag()) {
		w.fail(n.Line, path, fmt.Sprintf("must be %s, got %s %s", scalarNames[tags[0]], strings.TrimPrefix(n.ShortTag(), "!!"), n.Value), "")
	}
}

func (w *strictWalker) walkStruct(n *yaml.Node, t reflect.Type, path string) {
	if n.Kind != yaml.MappingNode {
		w.fail(n.Line, path, fmt.Sprintf("must be a mapping, not a %s", nodeKind(n)), "")
		return
	}
	fields, ok := w.fields[t]
	if !ok {
		if w.fields == nil {
			w.fields = map[reflect.Type]map[string]reflect.Type{}
		}
		fields = yamlFields(t)
		w.fields[t] = fields
	}
	seen := make(map[string]int, len(n.Content)/2)
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Value == "<<" && k.Tag == "!!merge" {
			w.walkMerge(v, t, path)
			continue
		}
		p := joinPath(path, k.Value)
		if first, dup := seen[k.Value]; dup {
			w.fail(k.Line, p, fmt.Sprintf("field is set twice (first on line %d)", first), "remove one of them")
			continue
		}
		seen[k.Value] = k.Line
		if _, ok := w.src.lines[p]; !ok {
			w.src.lines[p] = k.Line // a field is located by its key
		}
		ft, ok := fields[k.Value]
		if !ok {
			w.fail(k.Line, p, "unknown field", suggest(k.Value, fields))
			continue
		}
		w.walk(v, ft, p)
	}
}

func (w *strictWalker) walkMerge(v *yaml.Node, t reflect.Type, path string) {
	if !w.spend(v, path) {
		return
	}
	if v.Kind == yaml.AliasNode {
		w.enterAlias(v)
		defer func() { w.inAlias-- }()
		v = v.Alias
	}
	if v.Kind == yaml.SequenceNode {
		for _, m := range v.Content {
			w.walkMerge(m, t, path)
		}
		return
	}
	w.walkStruct(v, t, path)
}

func (w *strictWalker) walkMap(n *yaml.Node, t reflect.Type, path string) {
	if n.Kind != yaml.MappingNode {
		w.fail(n.Line, path, fmt.Sprintf("must be a mapping, not a %s", nodeKind(n)), "")
		return
	}
	seen := make(map[string]int, len(n.Content)/2)
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		p := joinPath(path, k.Value)
		if first, dup := seen[k.Value]; dup {
			w.fail(k.Line, p, fmt.Sprintf("key is set twice (first on line %d)", first), "remove one of them")
			continue
		}
		seen[k.Value] = k.Line
		w.src.lines[p] = k.Line
		w.walk(v, t.Elem(), p)
	}
}

func (w *strictWalker) walkSlice(n *yaml.Node, t reflect.Type, path string) {
	if n.Kind != yaml.SequenceNode {
		w.fail(n.Line, path, fmt.Sprintf("must be a list, not a %s", nodeKind(n)), "")
		return
	}
	for i, item := range n.Content {
		w.walk(item, t.Elem(), fmt.Sprintf("%s[%d]", path, i))
	}
}

func joinPath(parent, key string) string {
	if parent == "" {
		return key
	}
	return parent + "." + key
}

func nodeKind(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "mapping"
	case yaml.SequenceNode:
		return "list"
	case yaml.ScalarNode:
		return "scalar (" + strings.TrimPrefix(n.Tag, "!!") + ")"
	default:
		return "node"
	}
}

// yamlFields maps the YAML keys of a struct (inline structs flattened) to field types.
func yamlFields(t reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("yaml")
		name, opts, _ := strings.Cut(tag, ",")
		if name == "-" || !f.IsExported() {
			continue
		}
		if strings.Contains(opts, "inline") {
			for k, v := range yamlFields(f.Type) {
				out[k] = v
			}
			continue
		}
		if name == "" {
			name = strings.ToLower(f.Name)
		}
		out[name] = f.Type
	}
	return out
}

// suggest returns a "did you mean" hint for a misspelled key, or the list of known keys.
func suggest(key string, fields map[string]reflect.Type) string {
	names := make([]string, 0, len(fields))
	for k := range fields {
		names = append(names, k)
	}
	sort.Strings(names)
	if best := Closest(key, names, len(key)/2+1); best != "" {
		return fmt.Sprintf("did you mean %q?", best)
	}
	return "known fields: " + strings.Join(names, ", ")
}
