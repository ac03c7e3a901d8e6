package authoring

import "testing"

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
		"plain":        "plain",
		"[EUR, USD]":   "- EUR\n- USD\n",
		`{"a": [1,2]}`: "a:\n  - 1\n  - 2\n",
	} {
		n, err := valueNode(in)
		if err != nil || n.Value != want {
			t.Errorf("valueNode(%q) = %q, %v; want %q", in, n.Value, err, want)
		}
	}
}
