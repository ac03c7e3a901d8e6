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

	"github.com/fleetform/fleetform/internal/controlplane"
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
	lines   int        // the lines of the file before the document
	edited  bool
	removed bool
	// anchors are the anchored nodes that aliases refer to, as read; paths the field paths
	// of the anchored nodes and aliases, as read (both nil without aliases).
	anchors map[*yaml.Node]anchored
	paths   map[*yaml.Node]string
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
	lines := 0 // before the document
	for i, s := range starts {
		end := len(data)
		if i+1 < len(starts) {
			end = starts[i+1]
		}
		raw := data[s:end]
		d := &yamlDoc{raw: raw, lines: lines}
		lines += bytes.Count(raw, []byte("\n"))
		dec := yaml.NewDecoder(bytes.NewReader(raw))
		var n yaml.Node
		if err := dec.Decode(&n); err != nil && !errors.Is(err, io.EOF) {
			return nil, err
		} else if err == nil && len(n.Content) > 0 && n.Content[0].Kind == yaml.MappingNode {
			d.node = &n
			if bytes.IndexByte(raw, '*') >= 0 { // no alias without one
				d.anchors, d.paths = aliasedAnchors(d.root())
			}
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

// ensureMap returns the mapping at key in m, adding an empty one when absent. It refuses
// (aliasError) an alias, and a key m brings in through a merge key (<<).
func ensureMap(m *yaml.Node, key string) (*yaml.Node, error) {
	v := get(m, key)
	if err := throughAlias(m, key, v); err != nil {
		return nil, err
	}
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

// str is a string scalar, written quoted where a YAML 1.1 reader (kubectl, Helm) would read
// a boolean (on, NO, y).
func str(s string) *yaml.Node {
	n := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s}
	yamlnode.QuoteString(n)
	return n
}

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
// A mapping is not merged into an alias, nor set where dst brings the key in through a
// merge key (<<): either would change more than dst (aliasError).
func mergeInto(dst, src *yaml.Node) error {
	for i := 0; i+1 < len(src.Content); i += 2 {
		k, v := src.Content[i].Value, src.Content[i+1]
		old := get(dst, k)
		if v.Kind == yaml.MappingNode {
			if err := throughAlias(dst, k, old); err != nil {
				return err
			}
			if old != nil && old.Kind == yaml.MappingNode {
				if err := mergeInto(old, v); err != nil {
					return err
				}
				continue
			}
		}
		set(dst, k, v)
	}
	return nil
}

// aliasError is an edit refused because it goes through an alias (or a merge key, <<,
// which brings the value in from elsewhere): it would change the anchored value and every
// alias of it, or replace the merged value whole.
type aliasError struct {
	key          string
	name         string // the anchor
	line, column int    // of the alias
	anchorLine   int
	merged       bool
}

func (e *aliasError) Error() string {
	if e.merged {
		return fmt.Sprintf("line %d: %s comes from a merge key (<<: *%s): setting it here would replace the merged value whole", e.line, e.key, e.name)
	}
	return fmt.Sprintf("line %d: %s is an alias (*%s): a change made through it would change the value at line %d and every alias of it", e.line, e.key, e.name, e.anchorLine)
}

// throughAlias returns an aliasError when v, the value of key in m, is an alias, or when v is
// absent and a merge key of m brings key in.
func throughAlias(m *yaml.Node, key string, v *yaml.Node) error {
	merged := false
	if v == nil {
		v, merged = mergedFrom(m, key), true
	}
	if v == nil || (!merged && v.Kind != yaml.AliasNode) {
		return nil
	}
	e := &aliasError{key: key, name: v.Value, line: v.Line, column: v.Column, anchorLine: v.Line, merged: merged}
	if v.Kind == yaml.AliasNode && v.Alias != nil {
		e.anchorLine = v.Alias.Line
	} else {
		e.name = v.Anchor // an inline mapping after <<
	}
	return e
}

// mergedFrom returns the value after m's merge key (<<) that brings key in (an alias, or a
// mapping of a list of them), or nil.
func mergedFrom(m *yaml.Node, key string) *yaml.Node {
	src, _ := mergedIn(m, key, map[*yaml.Node]bool{m: true})
	return src
}

// mergedIn returns the value after m's merge key (<<) that brings key in, and key's value
// there; seen are the mappings already looked in (an anchored mapping can merge itself).
func mergedIn(m *yaml.Node, key string, seen map[*yaml.Node]bool) (src, v *yaml.Node) {
	if m == nil || m.Kind != yaml.MappingNode {
		return nil, nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if k := m.Content[i]; k.Kind != yaml.ScalarNode || k.Value != "<<" || k.ShortTag() != "!!merge" {
			continue
		}
		sources := []*yaml.Node{m.Content[i+1]}
		if m.Content[i+1].Kind == yaml.SequenceNode {
			sources = m.Content[i+1].Content
		}
		for _, s := range sources {
			if v := lookupIn(s, key, seen); v != nil {
				return s, v
			}
		}
	}
	return nil, nil
}

// lookup returns the value of key in mapping m as the loader reads it: through aliases, and
// from m's merge keys (<<) when m does not set key; nil when absent.
func lookup(m *yaml.Node, key string) *yaml.Node { return lookupIn(m, key, map[*yaml.Node]bool{}) }

func lookupIn(m *yaml.Node, key string, seen map[*yaml.Node]bool) *yaml.Node {
	m = deref(m)
	if m == nil || seen[m] {
		return nil
	}
	seen[m] = true
	if v := get(m, key); v != nil {
		return deref(v)
	}
	_, v := mergedIn(m, key, seen)
	return v
}

// deref is the node an alias refers to; other nodes are themselves.
func deref(n *yaml.Node) *yaml.Node {
	if n != nil && n.Kind == yaml.AliasNode && n.Alias != nil {
		return n.Alias
	}
	return n
}

// scalar is the value of a scalar node, "" for anything else.
func scalar(n *yaml.Node) string {
	if n == nil || n.Kind != yaml.ScalarNode {
		return ""
	}
	return n.Value
}

// walk calls fn on n and every node under it, in document order, with its field path
// (spec.deploymentTargets[1].labels); aliases are not followed.
func walk(n *yaml.Node, path string, fn func(n *yaml.Node, path string)) {
	fn(n, path)
	switch n.Kind {
	case yaml.DocumentNode:
		for _, c := range n.Content {
			walk(c, path, fn)
		}
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			p := n.Content[i].Value
			if path != "" {
				p = path + "." + p
			}
			walk(n.Content[i], p, fn)
			walk(n.Content[i+1], p, fn)
		}
	case yaml.SequenceNode:
		for i, c := range n.Content {
			walk(c, fmt.Sprintf("%s[%d]", path, i), fn)
		}
	}
}

// fingerprint is the value of n (tags, values, anchors and aliases, not styles or comments).
func fingerprint(n *yaml.Node) string {
	var b strings.Builder
	var write func(n *yaml.Node)
	write = func(n *yaml.Node) {
		fmt.Fprintf(&b, "%d%q%q%q[", n.Kind, n.Tag, n.Value, n.Anchor)
		for _, c := range n.Content {
			write(c)
		}
		b.WriteByte(']')
	}
	write(n)
	return b.String()
}

// anchored is an anchored node that aliases refer to, as read: its value and field path.
type anchored struct{ value, path string }

// aliasedAnchors returns the anchored nodes under root that aliases refer to, and the field
// path of every anchored node and alias; nil without aliases.
func aliasedAnchors(root *yaml.Node) (map[*yaml.Node]anchored, map[*yaml.Node]string) {
	var anchors map[*yaml.Node]anchored
	paths := map[*yaml.Node]string{}
	walk(root, "", func(n *yaml.Node, path string) {
		switch {
		case n.Anchor != "":
			paths[n] = path
		case n.Kind == yaml.AliasNode && n.Alias != nil:
			paths[n] = path
			if _, ok := anchors[n.Alias]; !ok {
				if anchors == nil {
					anchors = map[*yaml.Node]anchored{}
				}
				anchors[n.Alias] = anchored{value: fingerprint(n.Alias), path: paths[n.Alias]}
			}
		}
	})
	if anchors == nil {
		return nil, nil
	}
	return anchors, paths
}

// refusal is err, when it is an aliasError of the document, as a located error (file, line,
// object, field, what to do); other errors are returned as they are.
func (d *yamlDoc) refusal(file string, err error) error {
	var ae *aliasError
	if !errors.As(err, &ae) {
		return err
	}
	kind, name := d.identity()
	diag := controlplane.Diagnostic{Severity: controlplane.SeverityError, File: file, Line: d.lines + ae.line,
		Kind: kind, Name: name, Path: cmp.Or(d.pathAt(ae.line, ae.column), ae.key)}
	if ae.merged {
		diag.Message = fmt.Sprintf("this merge key (<<) brings %s in from the value at line %d: setting %s here would replace the merged value whole",
			ae.key, d.lines+ae.anchorLine, ae.key)
		diag.Hint = "write " + ae.key + " out in full here, then make the change"
	} else {
		diag.Message = fmt.Sprintf("is an alias (*%s) of the value at line %d: a change made through it would change that value and every alias of it",
			ae.name, d.lines+ae.anchorLine)
		diag.Hint = "write the value out in full here instead of *" + ae.name + ", then make the change"
	}
	return diag
}

// pathAt is the field path, as read, of the alias at line and column ("" when unknown).
func (d *yamlDoc) pathAt(line, column int) string {
	for n, p := range d.paths {
		if n.Kind == yaml.AliasNode && n.Line == line && n.Column == column {
			return p
		}
	}
	return ""
}

// checkAliases refuses the document's edits when they change or remove a value that an
// alias left in the document refers to: the alias would change too, or refer to nothing.
func (d *yamlDoc) checkAliases(file string) error {
	if d.anchors == nil || d.node == nil || !d.edited || d.removed {
		return nil
	}
	present, same := map[*yaml.Node]bool{}, map[*yaml.Node]bool{}
	var bad *yaml.Node
	aliases := 0 // of bad's anchor
	walk(d.root(), "", func(n *yaml.Node, _ string) {
		if n.Anchor != "" {
			present[n] = true
		}
		a, ok := d.anchors[n.Alias]
		switch {
		case n.Kind != yaml.AliasNode || !ok || same[n.Alias]:
		case bad != nil:
			if n.Alias == bad.Alias {
				aliases++
			}
		case present[n.Alias] && fingerprint(n.Alias) == a.value:
			same[n.Alias] = true
		default:
			bad, aliases = n, 1
		}
	})
	if bad == nil {
		return nil
	}
	anchor := bad.Alias
	kind, name := d.identity()
	diag := controlplane.Diagnostic{Severity: controlplane.SeverityError, File: file, Line: d.lines + anchor.Line,
		Kind: kind, Name: name, Path: d.anchors[anchor].path,
		Message: fmt.Sprintf("is anchored (&%s) and %s (line %d) is an alias of it (*%s): ", anchor.Anchor, d.paths[bad], d.lines+bad.Line, bad.Value),
		Hint:    fmt.Sprintf("write the value out in full at %s instead of the alias *%s, then make the change", d.paths[bad], bad.Value)}
	if aliases > 1 {
		diag.Hint = fmt.Sprintf("write the value out in full at each of its %d aliases (*%s) instead, then make the change", aliases, bad.Value)
	}
	if present[anchor] {
		diag.Message += "the change would change both"
	} else {
		diag.Message += "the change would replace or remove this value and leave the alias without one"
	}
	return diag
}
