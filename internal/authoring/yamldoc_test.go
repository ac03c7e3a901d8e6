package authoring

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"

	yaml "go.yaml.in/yaml/v3"
)

// TestYAMLFileKeepsOtherDocuments: editing one document re-encodes only it; the others keep
// their bytes, and removing the first leaves no leading separator.
func TestYAMLFileKeepsOtherDocuments(t *testing.T) {
	t.Parallel()
	in := "# first\na: 1   # one\n---\nb: {x: 1}\n---\n# third\nc: [1, 2]\n"
	f, err := parseYAMLFile([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := f.bytes(); string(got) != in {
		t.Fatalf("unchanged file re-encoded:\n%s", got)
	}
	f.docs[1].edited = true
	set(f.docs[1].root(), "y", str("2"))
	got, _ := f.bytes()
	want := "# first\na: 1   # one\n---\nb: {x: 1}\ny: \"2\"\n---\n# third\nc: [1, 2]\n"
	if string(got) != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	f.docs[0].removed = true
	got, _ = f.bytes()
	if want := "b: {x: 1}\ny: \"2\"\n---\n# third\nc: [1, 2]\n"; string(got) != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

func TestValueNode(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"plain":          "plain",
		"[INFO] started": "[INFO] started",
		"{name}-suffix":  "{name}-suffix",
		"[EUR, USD]":     "- EUR\n- USD\n",
		`{"a": [1,2]}`:   "a:\n  - 1\n  - 2\n",
	} {
		n, err := valueNode(in)
		if err != nil || n.Value != want {
			t.Errorf("valueNode(%q) = %q, %v; want %q", in, n.Value, err, want)
		}
	}
}

// FuzzYAMLFile: a file read into documents and written back is the same bytes when no
// document is edited, and holds the same documents when every one is re-encoded or one is
// removed (empty documents hold nothing to lose, and are not compared).
func FuzzYAMLFile(f *testing.F) {
	f.Add("# first\na: 1   # one\n---\nb: {x: 1}\n---\n# third\nc: [1, 2]\n")
	f.Add("---\n# only a comment\n---\nkind: A\nmetadata: {name: a}\n--- # end\n")
	f.Add("a: |\n  text\n  ---\n  more\nb: &x {c: 1}\nd: *x\n")
	f.Add("kind: A\r\n---\r\nkind: B\r\n--- # c\r\nkind: C\r\n")
	f.Add("kind: A\n...\nkind: B\n...\n---\nkind: C\n...\n")
	f.Fuzz(func(t *testing.T, text string) {
		want, ok := documents(text)
		if !ok {
			return
		}
		file, err := parseYAMLFile([]byte(text))
		if err != nil {
			return
		}
		check := func(what string, want []string) {
			t.Helper()
			b, err := file.bytes()
			if err != nil {
				return // an edited document that cannot be encoded is an error, not a loss
			}
			if got, ok := documents(string(b)); !ok || !slices.Equal(got, want) {
				t.Fatalf("%s: %q\nbecame %q\nwant %q\ngot  %q", what, text, b, want, got)
			}
		}
		if b, err := file.bytes(); err != nil || string(b) != text {
			t.Fatalf("unedited: %q written back as %q, %v", text, b, err)
		}
		removed, at := -1, 0 // the last document with a node, and its place among want's
		for i, d := range file.docs {
			if d.node != nil {
				d.edited, removed = true, i
			}
		}
		check("re-encoded", want)
		if removed < 0 {
			return
		}
		for _, d := range file.docs[:removed] {
			ds, _ := documents(string(d.raw))
			at += len(ds)
		}
		file.docs[removed].removed = true
		check("one removed", slices.Delete(slices.Clone(want), at, at+1))
	})
}

// documents decodes the documents of a YAML stream that are not empty, each shown as Go
// syntax; ok is false when the stream does not decode.
func documents(text string) ([]string, bool) {
	dec := yaml.NewDecoder(strings.NewReader(text))
	var out []string
	for {
		var v any
		err := dec.Decode(&v)
		if errors.Is(err, io.EOF) {
			return out, true
		}
		if err != nil {
			return nil, false
		}
		if v != nil {
			out = append(out, fmt.Sprintf("%#v", v))
		}
	}
}

// FuzzValueNode: a config value given as text is kept as that text, or, when it is one
// structured YAML value, as YAML text that decodes to the same value.
func FuzzValueNode(f *testing.F) {
	f.Add("plain")
	f.Add("[EUR, USD]")
	f.Add(`{"a": [1, "2", "on"], "b": null}`)
	f.Add("a: {b}\nc: '007'\n")
	f.Fuzz(func(t *testing.T, text string) {
		n, err := valueNode(text)
		if err != nil {
			t.Fatalf("%q: %v", text, err)
		}
		if n.Style != yaml.LiteralStyle {
			if n.Value != text {
				t.Fatalf("%q kept as %q", text, n.Value)
			}
			return
		}
		dec := yaml.NewDecoder(strings.NewReader(text))
		var first, second yaml.Node
		if dec.Decode(&first) != nil || !errors.Is(dec.Decode(&second), io.EOF) {
			t.Fatalf("%q is not one YAML document, but was written as structured: %q", text, n.Value)
		}
		want, ok := documents(text)
		if !ok {
			return // structured, but no value compose can read ({[0]}): validation says so
		}
		if got, gok := documents(n.Value); !gok || !slices.Equal(got, want) {
			t.Fatalf("%q written as %q: %q, want %q", text, n.Value, got, want)
		}
	})
}
