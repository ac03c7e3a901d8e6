package app

import (
	"encoding/json"
	"reflect"
	"testing"
)

func layer(t *testing.T, repo, file, text string, vars map[string]string) Layer {
	t.Helper()
	vs, err := NewVars(vars, nil, "", "")
	if err != nil {
		t.Fatal(err)
	}
	l, err := ParseLayer(Source{Repo: repo, File: file}, []byte(text), vs)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func TestMergeProvenance(t *testing.T) {
	chart := layer(t, "source", "helm/values.yaml", "app:\n  name: hello\nreplicas: 1\nlogging:\n  level: Debug\n  format: json\nports: [80]\nimage: $IMAGE_NAME:$IMAGE_TAG\n",
		map[string]string{"IMAGE_NAME": "ghcr.io/org/hello", "IMAGE_TAG": "1.4.2"})
	env := layer(t, "config", "values.yaml", "replicas: 2\nlogging:\n  format: text\n", nil)
	target := layer(t, "config", "performance-test/values.yaml", "# the perf target\nlogging:\n  level: Info\nports: [8080, 9090]\napp: null\n", nil)
	v, err := Merge([]Layer{chart, env, target})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"replicas": float64(2), "logging": map[string]any{"level": "Info", "format": "text"},
		"ports": []any{float64(8080), float64(9090)}, "image": "ghcr.io/org/hello:1.4.2"}
	if !reflect.DeepEqual(v.Data, want) {
		t.Errorf("data %#v\nwant %#v", v.Data, want)
	}
	level := v.Prov["logging.level"]
	if level == nil || level.Source != (Source{Repo: "config", File: "performance-test/values.yaml", Line: 3}) {
		t.Fatalf("logging.level set by %+v", level)
	}
	if len(level.Shadowed) != 1 || level.Shadowed[0].Value != "Debug" || level.Shadowed[0].Source.File != "helm/values.yaml" || level.Shadowed[0].Source.Line != 5 {
		t.Errorf("logging.level shadows %+v", level.Shadowed)
	}
	if r := v.Prov["replicas"]; r.Source.File != "values.yaml" || r.Source.Line != 1 || len(r.Shadowed) != 1 {
		t.Errorf("replicas %+v", r)
	}
	if p := v.Prov["ports"]; p.Source.Line != 4 || !reflect.DeepEqual(p.Shadowed[0].Value, []any{float64(80)}) {
		t.Errorf("ports %+v", p)
	}
	if _, ok := v.Prov["app.name"]; ok {
		t.Error("app: null kept app.name")
	}
	if got := v.Lookup("logging"); len(got) != 2 {
		t.Errorf("Lookup(logging) = %v", got)
	}
}

func TestMergeMappingOverScalar(t *testing.T) {
	a := layer(t, "source", "a.yaml", "x: 1\nyy: {z: 1}\n", nil)
	b := layer(t, "config", "b.yaml", "x: {k: v}\nyy: 2\nw: {}\n", nil)
	v, err := Merge([]Layer{a, b})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"x": map[string]any{"k": "v"}, "yy": float64(2), "w": map[string]any{}}
	if !reflect.DeepEqual(v.Data, want) {
		t.Errorf("data %#v", v.Data)
	}
	if _, ok := v.Prov["x"]; ok {
		t.Error("x still has the scalar's provenance")
	}
	if p := v.Prov["yy"]; p == nil || len(p.Shadowed) != 1 || p.Shadowed[0].Source.File != "a.yaml" {
		t.Errorf("yy %+v", p)
	}
}

func TestDidYouMean(t *testing.T) {
	if got := closest("performance-tests", []string{"functional-test", "performance-test"}); got != "performance-test" {
		t.Errorf("closest = %q", got)
	}
	if got := closest("uat", []string{"performance-test"}); got != "" {
		t.Errorf("closest = %q", got)
	}
}

func FuzzMerge(f *testing.F) {
	f.Add("a: 1\nb: {c: [1, 2]}\n", "b: {c: null, d: x}\na: {e: 1}\n")
	f.Add("x: &a {y: 1}\nz: *a\n", "z: {y: 2}\n")
	f.Fuzz(func(t *testing.T, a, b string) {
		la, err := ParseLayer(Source{File: "a"}, []byte(a), Vars{})
		if err != nil {
			return
		}
		lb, err := ParseLayer(Source{File: "b"}, []byte(b), Vars{})
		if err != nil {
			return
		}
		v1, err := Merge([]Layer{la, lb})
		if err != nil {
			return
		}
		// Merging a layer over itself changes nothing: the merge is idempotent.
		v2, err := Merge([]Layer{la, lb, lb})
		if err != nil {
			t.Fatal(err)
		}
		j1, _ := json.Marshal(v1.Data)
		j2, _ := json.Marshal(v2.Data)
		if string(j1) != string(j2) {
			t.Fatalf("not idempotent: %s vs %s", j1, j2)
		}
		for p := range v1.Prov {
			if _, ok := v1.Get(p); !ok {
				t.Fatalf("provenance of %q, which has no value", p)
			}
		}
	})
}

// TestSubstitutedLayerKeepsNulls: a layer whose variables are substituted keeps its nulls
// ({b} deletes b, as in Helm), also in flow style.
func TestSubstitutedLayerKeepsNulls(t *testing.T) {
	chart := layer(t, "source", "values.yaml", "defaults: {a: 1, b: 2}\n", nil)
	env := layer(t, "config", "values.yaml", "defaults: {b}\ntag: $IMAGE_TAG\n", map[string]string{"IMAGE_TAG": "1.4.2"})
	v, err := Merge([]Layer{chart, env})
	if err != nil {
		t.Fatal(err)
	}
	if want := map[string]any{"defaults": map[string]any{"a": float64(1)}, "tag": "1.4.2"}; !reflect.DeepEqual(v.Data, want) {
		t.Errorf("data %#v\nwant %#v", v.Data, want)
	}
}
