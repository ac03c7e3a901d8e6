package app

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	yaml "go.yaml.in/yaml/v3"

	"github.com/fleetform/fleetform/internal/compose"
	"github.com/fleetform/fleetform/internal/yamlnode"
)

// Source says which file and line set a value: compose's provenance, with Repo the
// repository the file is in ("source", "config", or "command line" for --set values), File
// its path there ("--set" for the command line) and Line the value's line (none for the
// command line).
type Source = compose.Source

// Layer is one values file (or the command line's --set values), after variable
// substitution, in precedence order: later layers win.
type Layer struct {
	Source Source
	// root is the file's top-level mapping (nil: an empty file): the lines of its values.
	root *yaml.Node
	// data is the file as Helm reads it (helmValues). A layer of root alone is decoded as
	// the node says: the --set layer, whose node encodes the values of Helm's strvals.
	data map[string]any
}

// ParseLayer substitutes the variables vars defines in a values file and parses it. An
// empty file is an empty layer; anything but a mapping at the top is an error naming the
// file and line.
func ParseLayer(src Source, data []byte, vars Vars) (Layer, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return Layer{}, fmt.Errorf("%s: %w", src.File, err)
	}
	// Substituted in the parsed file, so that the lines of its values stay the file's.
	changed, err := SubstNode(src.File, &doc, vars)
	if err != nil {
		return Layer{}, err
	}
	if changed {
		if data, err = yamlnode.Encode(&doc); err != nil {
			return Layer{}, fmt.Errorf("%s: %w", src.File, err)
		}
	}
	l := Layer{Source: src}
	if doc.Kind == 0 || len(doc.Content) == 0 {
		return l, nil
	}
	n := doc.Content[0]
	switch {
	case n.Kind == yaml.ScalarNode && n.Tag == "!!null":
		return l, nil
	case n.Kind != yaml.MappingNode:
		return Layer{}, fmt.Errorf("%s:%d: a values file must be a mapping of keys to values", src.File, n.Line)
	}
	l.root = n
	if l.data, err = helmValues(src.File, data, n); err != nil {
		return Layer{}, err
	}
	return l, nil
}

// Provenance is where an effective value was set, and the lower values it replaced.
type Provenance struct {
	Source Source `json:"source"`
	// Shadowed are the values of the same key in lower layers, nearest first.
	Shadowed []Shadowed `json:"shadowed"`
}

// Shadowed is a lower-precedence value of a key and where it was set (compose's).
type Shadowed = compose.Shadowed

// Values are composed values: the data Helm renders with, and the provenance of every
// leaf (a scalar, a list, an empty mapping or a null) by its path.
type Values struct {
	Data map[string]any
	Prov map[string]*Provenance
	// helm are the values above the chart's values.yaml as helm reads its -f files and
	// --set (nulls kept: they delete a chart's or subchart's default); nil for kustomize.
	helm map[string]any
}

// Merge deep-merges layers as Helm merges values files: mappings merge key by key; a
// scalar or a list replaces what is below it; a null removes the key. It is not
// compose.Merge, which merges platform config as Kalypso does (lists by their items' name):
// an application's values must render exactly as helm renders them. The values are typed
// as Helm types them (helmValues); each leaf's provenance is the line of its key.
func Merge(layers []Layer) (*Values, error) {
	v := &Values{Data: map[string]any{}, Prov: map[string]*Provenance{}}
	var errs []error
	for _, l := range layers {
		data, err := l.values()
		if err != nil {
			errs = append(errs, err)
			continue
		}
		v.mergeMapping(v.Data, data, l.root, "", l.Source)
	}
	return v, errors.Join(errs...)
}

// values returns the layer's data: what ParseLayer read, or its node decoded.
func (l Layer) values() (map[string]any, error) {
	if l.data != nil || l.root == nil {
		return l.data, nil
	}
	m, err := decode(l.root)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", l.Source.File, err)
	}
	data, _ := m.(map[string]any)
	return data, nil
}

// mergeMapping merges the mapping src, whose node is n (nil when unknown), into dst at
// prefix; at is where src is (its line, the lines of the keys n does not have).
func (v *Values) mergeMapping(dst, src map[string]any, n *yaml.Node, prefix string, at Source) {
	nodes := keyNodes(n)
	for _, k := range slices.Sorted(maps.Keys(src)) {
		val, path, here := src[k], joinPath(prefix, k), at
		e := nodes[k]
		if e.key != nil {
			here.Line = e.key.Line
		}
		old, had := dst[k]
		sub, isMap := val.(map[string]any)
		switch {
		case val == nil:
			delete(dst, k)
			v.dropBelow(path)
		case isMap && len(sub) == 0 && isMapValue(old):
			// an empty mapping over a mapping changes nothing, as in Helm
		case isMap && len(sub) > 0:
			into, ok := old.(map[string]any)
			if !ok {
				v.dropBelow(path) // a leaf replaced by a mapping
				into = map[string]any{}
				dst[k] = into
			}
			v.mergeMapping(into, sub, e.value, path, here)
		default:
			v.set(path, old, had, here)
			dst[k] = deepCopy(val)
		}
	}
}

// deepCopy copies the mappings and lists of a value, which a layer shares with every
// target composed from it.
func deepCopy(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = deepCopy(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = deepCopy(e)
		}
		return out
	}
	return v
}

// set records that at set path to a leaf, over old (when had).
func (v *Values) set(path string, old any, had bool, at Source) {
	p := &Provenance{Source: at, Shadowed: []Shadowed{}}
	if prev, ok := v.Prov[path]; ok {
		p.Shadowed = append([]Shadowed{{Value: old, Source: prev.Source}}, prev.Shadowed...)
	} else if had {
		p.Shadowed = v.collectShadowed(path, old)
		v.dropBelow(path)
	}
	v.Prov[path] = p
}

func isMapValue(v any) bool {
	_, ok := v.(map[string]any)
	return ok
}

// collectShadowed returns a mapping being replaced by a leaf as one shadowed value, with
// the source of its first leaf.
func (v *Values) collectShadowed(path string, old any) []Shadowed {
	for _, p := range slices.Sorted(maps.Keys(v.Prov)) {
		if strings.HasPrefix(p, path+".") || strings.HasPrefix(p, path+"[") {
			return []Shadowed{{Value: old, Source: v.Prov[p].Source}}
		}
	}
	return []Shadowed{}
}

// dropBelow forgets the provenance of path and of everything below it.
func (v *Values) dropBelow(path string) {
	delete(v.Prov, path)
	for p := range v.Prov {
		if strings.HasPrefix(p, path+".") || strings.HasPrefix(p, path+"[") {
			delete(v.Prov, p)
		}
	}
}

// Lookup returns the provenance of the leaves at or below path, by path.
func (v *Values) Lookup(path string) map[string]*Provenance {
	out := map[string]*Provenance{}
	for p, prov := range v.Prov {
		if p == path || path == "" || strings.HasPrefix(p, path+".") || strings.HasPrefix(p, path+"[") {
			out[p] = prov
		}
	}
	return out
}

// Get returns the value at a path of the data (as Lookup's paths write it).
func (v *Values) Get(path string) (any, bool) {
	var cur any = v.Data
	for _, k := range splitPath(path) {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = m[k]; !ok {
			return nil, false
		}
	}
	return cur, true
}

// joinPath appends a key to a dotted path; keys with dots or brackets are written ["key"].
func joinPath(prefix, key string) string {
	if strings.ContainsAny(key, ".[]\"") || key == "" {
		return prefix + fmt.Sprintf("[%q]", key)
	}
	if prefix == "" {
		return key
	}
	return prefix + "." + key
}

// splitPath is the inverse of joinPath.
func splitPath(path string) []string {
	var out []string
	for path != "" {
		switch {
		case strings.HasPrefix(path, "[\""):
			end := strings.Index(path, "\"]")
			if end < 0 {
				return append(out, path)
			}
			out = append(out, strings.ReplaceAll(path[2:end], `\"`, `"`))
			path = strings.TrimPrefix(path[end+2:], ".")
		default:
			end := strings.IndexAny(path, ".[")
			if end < 0 {
				return append(out, path)
			}
			out = append(out, path[:end])
			path = strings.TrimPrefix(path[end:], ".")
		}
	}
	return out
}

// resolve follows an alias.
func resolve(n *yaml.Node) *yaml.Node {
	for n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	return n
}

// decode turns a node of the --set layer back into the values of Helm's strvals it encodes:
// map[string]any, []any, strings, bools, int64 and nil.
func decode(n *yaml.Node) (any, error) {
	var v any
	if err := n.Decode(&v); err != nil {
		return nil, err
	}
	return normalize(v), nil
}

func normalize(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = normalize(e)
		}
		return x
	case map[any]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[fmt.Sprint(k)] = normalize(e)
		}
		return out
	case []any:
		for i, e := range x {
			x[i] = normalize(e)
		}
		return x
	case int:
		return int64(x)
	}
	return v
}
