package authoring

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"

	yaml "go.yaml.in/yaml/v3"

	"github.com/fleetform/fleetform/internal/yamlnode"
)

// yamlFile is a YAML file as its documents. Documents that are not edited keep their bytes
// exactly; an edited document is re-encoded from its node tree, which keeps its comments
// and key order.
type yamlFile struct {
	docs []*yamlDoc
}

type yamlDoc struct {
	raw     []byte     // the document's text, separator line included
	node    *yaml.Node // the document node; nil for a document holding only comments
	edited  bool
	removed bool
}

// separator finds the lines that start a document ("---", with a comment or the
// document's first content after it) or end one ("..."), their line breaks LF or CRLF;
// bareSeparator one with nothing after; endsDocument text whose last line is a "...";
// loneCR a CR without LF, which YAML takes for a line break and these patterns do not.
var (
	separator     = regexp.MustCompile(`(?m)^(---|\.\.\.)([ \t][^\n]*)?\r?$`)
	bareSeparator = regexp.MustCompile(`^---[ \t]*\r?\n`)
	endsDocument  = regexp.MustCompile(`(?m)^\.\.\.([ \t][^\n]*)?\r?\n?\z`)
	loneCR        = regexp.MustCompile(`\r([^\n]|\z)`)
)

// parseYAMLFile splits data into documents (at the lines that start one, and after those
// that end one), and parses each.
func parseYAMLFile(data []byte) (*yamlFile, error) {
	if loneCR.Match(data) {
		return nil, errors.New("a line ends in a lone CR (classic Mac OS line breaks): only files whose lines end in LF or CRLF are edited")
	}
	f := &yamlFile{}
	starts := []int{0}
	for _, loc := range separator.FindAllIndex(data, -1) {
		at := loc[0]
		if data[at] == '.' { // "..." ends its document: the next one starts on the next line
			at = min(loc[1]+1, len(data))
		}
		if at > starts[len(starts)-1] && at < len(data) {
			starts = append(starts, at)
		}
	}
	for i, s := range starts {
		end := len(data)
		if i+1 < len(starts) {
			end = starts[i+1]
		}
		raw := data[s:end]
		d := &yamlDoc{raw: raw}
		dec := yaml.NewDecoder(bytes.NewReader(raw))
		var n yaml.Node
		if err := dec.Decode(&n); err != nil && !errors.Is(err, io.EOF) {
			return nil, err
		} else if err == nil && len(n.Content) > 0 && n.Content[0].Kind == yaml.MappingNode {
			d.node = &n
		}
		f.docs = append(f.docs, d)
	}
	return f, nil
}

// bytes encodes the file: unedited documents as they were, edited ones re-encoded.
func (f *yamlFile) bytes() ([]byte, error) {
	var out bytes.Buffer
	for _, d := range f.docs {
		if d.removed {
			continue
		}
		if !d.edited {
			if out.Len() > 0 && !bytes.HasSuffix(out.Bytes(), []byte("\n")) {
				out.WriteByte('\n')
			}
			if out.Len() > 0 && !separator.Match(firstLine(d.raw)) && !endsDocument.Match(out.Bytes()) {
				out.WriteString("---\n")
			}
			out.Write(d.raw)
			continue
		}
		b, err := yamlnode.Encode(d.node)
		if err != nil {
			return nil, err
		}
		if out.Len() > 0 {
			if !bytes.HasSuffix(out.Bytes(), []byte("\n")) {
				out.WriteByte('\n')
			}
			out.WriteString("---\n")
		}
		out.Write(b)
	}
	b := out.Bytes()
	// A file whose first document was removed does not start with the next one's bare "---".
	if len(f.docs) > 0 && f.docs[0].removed {
		if loc := bareSeparator.FindIndex(b); loc != nil {
			if rest := bytes.TrimLeft(b[loc[1]:], "\n"); wellFormed(rest) {
				b = rest // (a "..." after it, say, needs it)
			}
		}
	}
	return b, nil
}

// wellFormed reports whether data is a YAML stream that decodes.
func wellFormed(data []byte) bool {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	for {
		var n yaml.Node
		if err := dec.Decode(&n); err != nil {
			return errors.Is(err, io.EOF)
		}
	}
}

// empty reports whether no document with content is left.
func (f *yamlFile) empty() bool {
	for _, d := range f.docs {
		if !d.removed && d.node != nil {
			return false
		}
	}
	return true
}

func firstLine(b []byte) []byte {
	if i := bytes.IndexByte(b, '\n'); i >= 0 {
		return b[:i]
	}
	return b
}

// appendDoc adds a new document at the end.
func (f *yamlFile) appendDoc(n *yaml.Node) {
	f.docs = append(f.docs, &yamlDoc{node: n, edited: true})
}

// root is the document's top mapping.
func (d *yamlDoc) root() *yaml.Node { return d.node.Content[0] }

// identity returns the document's kind and metadata.name.
func (d *yamlDoc) identity() (kind, name string) {
	if d.node == nil {
		return "", ""
	}
	r := d.root()
	if k := get(r, "kind"); k != nil {
		kind = k.Value
	}
	if m := get(r, "metadata"); m != nil {
		if n := get(m, "name"); n != nil {
			name = n.Value
		}
	}
	return kind, name
}

// get returns the value of key in mapping m, or nil.
func get(m *yaml.Node, key string) *yaml.Node {
	if m == nil || m.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}

// ensureMap returns the mapping at key in m, adding an empty one when absent.
func ensureMap(m *yaml.Node, key string) (*yaml.Node, error) {
	v := get(m, key)
	if v == nil || (v.Kind == yaml.ScalarNode && (v.Tag == "!!null" || v.Value == "")) {
		nv := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
		set(m, key, nv)
		return nv, nil
	}
	if v.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("%s is not a mapping", key)
	}
	return v, nil
}

// set sets key in mapping m to v, in place when the key exists (its comments kept), at the
// end otherwise.
func set(m *yaml.Node, key string, v *yaml.Node) {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			old := m.Content[i+1]
			v.HeadComment, v.LineComment, v.FootComment = cmp.Or(v.HeadComment, old.HeadComment),
				cmp.Or(v.LineComment, old.LineComment), cmp.Or(v.FootComment, old.FootComment)
			m.Content[i+1] = v
			return
		}
	}
	m.Content = append(m.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: key}, v)
}

// unset removes key from mapping m; it reports whether it was there.
func unset(m *yaml.Node, key string) bool {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			m.Content = slices.Delete(m.Content, i, i+2)
			return true
		}
	}
	return false
}

// str is a string scalar node.
func str(s string) *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s} }

// keyRank orders the keys of new documents as people write them; others sort after, by name.
var keyRank = ranks("apiVersion", "kind", "metadata", "name", "namespace", "labels", "annotations", "spec", "data",
	"controlPlane", "promotion", "from", "reconciler", "namespaceService", "configType",
	"deploymentTargetSelector", "clusterTypeSelector", "workspace", "labelSelector", "matchLabels", "matchExpressions",
	"key", "operator", "values", "workload", "deploymentTargets", "environment", "manifests", "repo", "branch", "path", "commit")

// ranks maps each key to its place in keys, from 1.
func ranks(keys ...string) map[string]int {
	out := make(map[string]int, len(keys))
	for i, k := range keys {
		out[k] = i + 1
	}
	return out
}

// toNode turns a value decoded from JSON or built in Go into a node, with mapping keys in
// keyRank order.
func toNode(v any) (*yaml.Node, error) {
	switch x := v.(type) {
	case *yaml.Node:
		return x, nil
	case map[string]any:
		n := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.SortFunc(keys, func(a, b string) int {
			ra, rb := keyRank[a], keyRank[b]
			if ra == 0 {
				ra = len(keyRank) + 1
			}
			if rb == 0 {
				rb = len(keyRank) + 1
			}
			return cmp.Or(cmp.Compare(ra, rb), strings.Compare(a, b))
		})
		for _, k := range keys {
			c, err := toNode(x[k])
			if err != nil {
				return nil, err
			}
			n.Content = append(n.Content, str(k), c)
		}
		return n, nil
	case map[string]string:
		m := make(map[string]any, len(x))
		for k, s := range x {
			m[k] = s
		}
		return toNode(m)
	case []any:
		n := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"}
		for _, e := range x {
			c, err := toNode(e)
			if err != nil {
				return nil, err
			}
			n.Content = append(n.Content, c)
		}
		return n, nil
	case string:
		return str(x), nil
	}
	var n yaml.Node
	if err := n.Encode(v); err != nil {
		return nil, err
	}
	return &n, nil
}

// mergeInto merges src (a mapping) into dst: mappings recursively, everything else replaced.
func mergeInto(dst, src *yaml.Node) {
	for i := 0; i+1 < len(src.Content); i += 2 {
		k, v := src.Content[i].Value, src.Content[i+1]
		if old := get(dst, k); old != nil && old.Kind == yaml.MappingNode && v.Kind == yaml.MappingNode {
			mergeInto(old, v)
			continue
		}
		set(dst, k, v)
	}
}
