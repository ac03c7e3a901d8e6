package promote

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	yaml "go.yaml.in/yaml/v3"

	"github.com/fleetform/fleetform/api/v1alpha1"
)

func TestBaseRepoYAMLKeepsTheFile(t *testing.T) {
	old := `# dev follows main
apiVersion: scheduler.kalypso.io/v1alpha1
kind: BaseRepo
metadata:
  name: main
spec:
  repo: https://github.com/microsoft/kalypso-control-plane
  branch: main
  path: .
  commit: 5523a85f37d12c0c7c10ab6616644db089fcd6f7 # pinned by CI
`
	const c = "0123456789abcdef0123456789abcdef01234567"
	got, err := baseRepoYAML([]byte(old), c)
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Replace(old, "5523a85f37d12c0c7c10ab6616644db089fcd6f7 # pinned by CI", c, 1)
	if string(got) != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
	// Without a commit field, one is added; without a file, one is written; both load.
	for _, in := range []string{strings.Replace(old, "  commit: 5523a85f37d12c0c7c10ab6616644db089fcd6f7 # pinned by CI\n", "", 1), ""} {
		got, err := baseRepoYAML([]byte(in), c)
		if err != nil || !strings.Contains(string(got), "  commit: "+c+"\n") {
			t.Errorf("from %q: %s, %v", in, got, err)
		}
		var br v1alpha1.BaseRepo
		dec := yaml.NewDecoder(bytes.NewReader(got))
		dec.KnownFields(true)
		if err := dec.Decode(&br); err != nil || br.Spec.Commit != c || br.Kind != v1alpha1.KindBaseRepo {
			t.Errorf("the written file does not decode strictly: %+v, %v", br, err)
		}
	}
	if _, err := baseRepoYAML([]byte("- a list\n"), c); err == nil {
		t.Error("a list was taken for a BaseRepo")
	}
	// A second document is not dropped: the pin is refused; empty ones are no loss.
	if _, err := baseRepoYAML([]byte(old+"---\nkind: ConfigMap\n"), c); err == nil || !strings.Contains(err.Error(), "line 11: a second document") {
		t.Errorf("a file of two documents: %v", err)
	}
	if got, err := baseRepoYAML([]byte(old+"---\n"), c); err != nil || !strings.Contains(string(got), "  commit: "+c+"\n") {
		t.Errorf("a file ending with an empty document: %s, %v", got, err)
	}
}

// FuzzBaseRepoYAML: a pin written into an existing file changes spec.commit alone.
func FuzzBaseRepoYAML(f *testing.F) {
	f.Add("# dev follows main\nkind: BaseRepo\nspec:\n  repo: r\n  commit: old # pinned\n")
	f.Add("kind: BaseRepo\nspec: {branch: main, path: .}\nlabels: {a}\n")
	f.Add("spec:\n  commit: &c old\nseen: *c\n---\n")
	f.Fuzz(func(t *testing.T, text string) {
		const commit = "0123456789abcdef0123456789abcdef01234567"
		var before map[string]any
		if strings.TrimSpace(text) == "" || yaml.Unmarshal([]byte(text), &before) != nil {
			return
		}
		got, err := baseRepoYAML([]byte(text), commit)
		if err != nil {
			return
		}
		var after map[string]any
		if err := yaml.Unmarshal(got, &after); err != nil {
			t.Fatalf("%q became %q, which does not decode: %v", text, got, err)
		}
		switch spec := before["spec"].(type) {
		case map[string]any:
			spec["commit"] = commit
		case map[any]any:
			spec["commit"] = commit
		default:
			before["spec"] = map[string]any{"commit": commit}
		}
		if a, b := fmt.Sprintf("%#v", after), fmt.Sprintf("%#v", before); a != b {
			t.Fatalf("%q became %q:\n got %s\nwant %s", text, got, a, b)
		}
	})
}
