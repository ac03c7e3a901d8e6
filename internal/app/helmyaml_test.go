package app

import (
	"fmt"
	"reflect"
	"regexp"
	"strings"
	"testing"

	yaml "go.yaml.in/yaml/v3"
	sigsyaml "sigs.k8s.io/yaml"
)

func TestHelmRefusesInfinity(t *testing.T) {
	for _, c := range []struct{ text, want string }{
		{"a: 1\nb:\n  c: [1, -.Inf]\n", `config/values.yaml:3: -.Inf is an infinite or not-a-number float in YAML 1.1, which Helm cannot read`},
		{"nan: .nan\n", `config/values.yaml:1: .nan is an infinite`},
		{"? [a]\n: 1\n", "config/values.yaml: Helm cannot read this values file (it reads YAML 1.1, then JSON)"},
		{"~: 1\n", "config/values.yaml: Helm cannot read this values file"},
	} {
		_, err := ParseLayer(Source{Repo: "config", File: "config/values.yaml"}, []byte(c.text), Vars{})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want %q", c.text, err, c.want)
		}
	}
	if _, err := ParseLayer(Source{File: "f"}, []byte(".inf: '.inf'\nx: \".nan\"\n"), Vars{}); err != nil {
		t.Errorf("a .inf key and quoted ones: %v", err)
	}
}

func TestProvenanceOfHelmKeys(t *testing.T) {
	l := layer(t, "source", "v.yaml", "base: &b\n  a: 1\nm:\n  b: 2\n  <<: *b\non: x\n0x10: y\n\"on\": z\n", nil)
	v, err := Merge([]Layer{l})
	if err != nil {
		t.Fatal(err)
	}
	for path, line := range map[string]int{"m.a": 2, "m.b": 4, "true": 6, "16": 7, "on": 8, "base.a": 2} {
		if p := v.Prov[path]; p == nil || p.Source.Line != line {
			t.Errorf("%s set at %+v, want line %d", path, p, line)
		}
	}
}

func FuzzHelmValues(f *testing.F) {
	f.Add("a: 1000000\nb: on\nc: 2001-12-14\nd: [0x1F, 0o17, 1_000]\n")
	f.Add("base: &b {a: 1, b: two}\nm:\n  b: first\n  <<: [*b, {c: 3}]\ny: n\n0x10: 1.5\n")
	f.Add("'on': 1\n!!str on: 2\n? !!int '7'\n: 3\n1.5: x\n-1: y\n")
	f.Add("a: {<<: {b: 1}, c: {<<: {d: 2}}}\nl: [{<<: {e: 3}}]\n")
	f.Fuzz(func(t *testing.T, text string) {
		l, err := ParseLayer(Source{File: "f"}, []byte(text), Vars{})
		if err != nil || l.data == nil {
			return
		}
		var helm map[string]any
		if err := sigsyaml.Unmarshal([]byte(text), &helm); err != nil {
			t.Fatalf("helm cannot read it, ParseLayer did: %v", err)
		}
		v, err := Merge([]Layer{l})
		if err != nil {
			t.Fatal(err)
		}
		if ambiguousKeys(l.root, nonSpecificTag.MatchString(text)) {
			return
		}
		if want := withoutNulls(helm); !reflect.DeepEqual(v.Data, want) {
			t.Fatalf("data %#v\nhelm %#v", v.Data, want)
		}
		if !nonSpecificTag.MatchString(text) {
			checkIndexed(t, l.data, l.root, "")
		}
	})
}

// nonSpecificTag finds a "!" tag, which yaml.v3's nodes do not keep (! on: is the key "on"
// for yaml.v2, but a plain on for yaml.v3): keyNodes may then miss a key, whose provenance
// is the line of its mapping.
var nonSpecificTag = regexp.MustCompile(`!([\s,\]}]|$)`)

// ambiguousKeys reports whether a mapping below n has two keys that are different for
// yaml.v2 and the same string for Helm (0 and 0.0, or 0 and !!str 0, whose text is the
// same), among its own keys or those a merge key (<<) brings in: which one Helm keeps is
// random. Keys are told apart by how they are written (tag, quoting, text), which takes a
// few keys yaml.v2 reads as the same (1 and 0x1) for different ones: such inputs are only
// left unchecked. (Two keys of one mapping that yaml.v2 reads as the same are an error of
// its own, which the fuzz target never reaches.) With tagged, the text has a "!" tag, which
// yaml.v3's nodes do not keep (0 and ! 0 are one int key for yaml.v3, an int and a string
// for yaml.v2): any two keys of one Helm name may then be different for yaml.v2.
func ambiguousKeys(n *yaml.Node, tagged bool) bool {
	if n == nil {
		return false
	}
	if n.Kind == yaml.MappingNode {
		seen := map[string]string{} // Helm's key -> how it is written
		for _, k := range effectiveKeys(n, 0) {
			name, ok := helmKey(k)
			if !ok {
				continue
			}
			written := k.Value
			if k.Style != 0 {
				written = fmt.Sprintf("%s %d %s", k.Tag, k.Style, k.Value)
			}
			if w, dup := seen[name]; dup && (w != written || tagged) {
				return true
			}
			seen[name] = written
		}
	}
	for _, c := range n.Content {
		if ambiguousKeys(c, tagged) {
			return true
		}
	}
	return false
}

// effectiveKeys lists the key nodes of a mapping with those its merge keys bring in.
func effectiveKeys(n *yaml.Node, depth int) []*yaml.Node {
	if n == nil || depth > maxMergeDepth {
		return nil
	}
	if n = resolve(n); n.Kind != yaml.MappingNode {
		return nil
	}
	var out []*yaml.Node
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], resolve(n.Content[i+1])
		switch {
		case !isMergeKey(k):
			out = append(out, k)
		case v.Kind == yaml.SequenceNode:
			for _, m := range v.Content {
				out = append(out, effectiveKeys(m, depth+1)...)
			}
		default:
			out = append(out, effectiveKeys(v, depth+1)...)
		}
	}
	return out
}

// withoutNulls drops the null values of mappings (and of the mappings in them), as Merge does.
func withoutNulls(m map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range m {
		switch x := v.(type) {
		case nil:
		case map[string]any:
			out[k] = withoutNulls(x)
		default:
			out[k] = v
		}
	}
	return out
}

// checkIndexed fails unless keyNodes finds the node of every key of data, at every level.
func checkIndexed(t *testing.T, data map[string]any, n *yaml.Node, path string) {
	t.Helper()
	nodes := keyNodes(n)
	for k, v := range data {
		e, ok := nodes[k]
		if !ok {
			t.Fatalf("%s: no node for key %q among %d", path, k, len(nodes))
		}
		if sub, isMap := v.(map[string]any); isMap {
			if resolve(e.value).Kind != yaml.MappingNode {
				t.Fatalf("%s.%s: a mapping, but its node is not", path, k)
			}
			checkIndexed(t, sub, e.value, path+"."+k)
		}
	}
}
