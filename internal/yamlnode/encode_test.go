package yamlnode

import (
	"fmt"
	"testing"

	yaml "go.yaml.in/yaml/v3"
)

// TestEncodeKeepsNulls: empty nulls that yaml.v3 would write as empty strings are written
// null, and every document decodes to what it was.
func TestEncodeKeepsNulls(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"a: {b}\n":            "a: {b: null}\n",
		"&k : 1\nb:\nc: ~\n":  "&k null: 1\nb:\nc: ~\n",
		"a: [~, {c, d: 1}]\n": "a: [~, {c: null, d: 1}]\n",
		"a:\n  - \n":          "a:\n  -\n",
	} {
		var n yaml.Node
		if err := yaml.Unmarshal([]byte(in), &n); err != nil {
			t.Fatal(err)
		}
		got, err := Encode(&n)
		if err != nil || string(got) != want {
			t.Errorf("%q: got %q, %v; want %q", in, got, err, want)
		}
		var before, after any
		if err := yaml.Unmarshal([]byte(in), &before); err != nil {
			t.Fatal(err)
		}
		if err := yaml.Unmarshal(got, &after); err != nil || fmt.Sprintf("%#v", after) != fmt.Sprintf("%#v", before) {
			t.Errorf("%q: decodes to %#v, %v; want %#v", in, after, err, before)
		}
	}
}
