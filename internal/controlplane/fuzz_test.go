package controlplane

import (
	"bytes"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	yaml "go.yaml.in/yaml/v3"

	"github.com/fleetform/fleetform/api/v1alpha1"
)

// FuzzLoad feeds arbitrary bytes as one YAML file through decoding and sorting into a
// snapshot. It must never panic; decoding must be deterministic; every diagnostic must name
// the file and a line of it: decoding always knows a position, so the line is never 0.
func FuzzLoad(f *testing.F) {
	// The Kalypso fixture lives in ../shared next to the project (see gittest.FixtureDir);
	// without it the fuzz target still runs, on the built-in seeds.
	fx := filepath.Join("..", "..", "..", "shared", "fixtures", "kalypso")
	if _, err := os.Stat(fx); err != nil {
		f.Logf("Kalypso fixture not found at %s: seeding with built-in inputs only", fx)
		fx = f.TempDir()
	}
	err := filepath.WalkDir(fx, func(p string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() || !isYAML(p) {
			return err
		}
		data, err := os.ReadFile(p)
		if err == nil {
			f.Add(data)
		}
		return err
	})
	if err != nil {
		f.Fatal(err)
	}
	for _, seed := range fuzzSeeds {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		src := Source{File: "fuzz.yaml"}
		docs, diags := decodeFile(data, src)
		docs2, diags2 := decodeFile(data, src)
		if !reflect.DeepEqual(diags, diags2) {
			t.Fatalf("diagnostics differ between two runs:\n%v\n%v", diags, diags2)
		}
		if !reflect.DeepEqual(docs, docs2) { // NaN is never DeepEqual: compare the YAML then
			if a, b := describeDocs(t, docs), describeDocs(t, docs2); a != b {
				t.Fatalf("documents differ between two runs:\n%s\n%s", a, b)
			}
		}
		maxLine := yamlLines(data)
		checkFuzzDiags(t, diags, maxLine)
		for _, d := range docs {
			if d.source.File != "fuzz.yaml" || d.source.Line < 1 || d.source.Line > maxLine {
				t.Errorf("document %s/%s at %s:%d (file has %d lines)", d.kind, d.name, d.source.File, d.source.Line, maxLine)
			}
			if d.broken {
				if d.object != nil || !HasErrors(diags) {
					t.Errorf("broken document with an object, or without an error: %+v", d)
				}
				continue
			}
			if d.name == "" || d.object == nil {
				t.Errorf("document without name or object: %+v", d)
			}
			if want, ok := kindTypes[scalarKinds[d.kind]]; !ok || reflect.TypeOf(d.object) != reflect.PointerTo(want) {
				t.Errorf("document of kind %s decoded as %T", d.kind, d.object)
			}
		}
		// The same documents through every origin of both layouts.
		for _, layout := range []Layout{LayoutFolder, LayoutKalypso} {
			for _, from := range []origin{fromEnvironment, fromCommon, fromWorkloadRepo} {
				b := newBuilder("dev", layout)
				var reg *WorkloadRegistration
				if from == fromWorkloadRepo {
					reg = &WorkloadRegistration{WorkloadRegistration: &v1alpha1.WorkloadRegistration{
						Metadata: v1alpha1.ObjectMeta{Name: "reg"}, Spec: v1alpha1.WorkloadRegistrationSpec{Workspace: "team"}}}
				}
				for _, d := range docs {
					b.add(d, from, reg)
				}
				checkFuzzDiags(t, b.snap.Diagnostics, maxLine)
			}
		}
	})
}

// scalarKinds maps a kind to its kindTypes key.
var scalarKinds = func() map[string]string {
	m := map[string]string{}
	for k := range kindTypes {
		_, kind := cutLast(k, "/")
		m[kind] = k
	}
	return m
}()

// bomb returns status lines defining anchors name1..nameN, each a list of ten aliases of the
// one before, the first a list of ten leaf.
func bomb(name string, levels int, leaf string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "  %s1: &%s1 [%s]\n", name, name, strings.TrimSuffix(strings.Repeat(leaf+",", 10), ","))
	for i := 2; i <= levels; i++ {
		ref := fmt.Sprintf("*%s%d", name, i-1)
		fmt.Fprintf(&b, "  %s%d: &%s%d [%s]\n", name, i, name, i, strings.TrimSuffix(strings.Repeat(ref+",", 10), ","))
	}
	return b.String()
}

func checkFuzzDiags(t *testing.T, diags []Diagnostic, maxLine int) {
	t.Helper()
	for _, d := range diags {
		if d.File != "fuzz.yaml" || d.Line < 1 || d.Line > maxLine {
			t.Errorf("diagnostic at %s:%d (file has %d lines): %v", d.File, d.Line, maxLine, d)
		}
		if d.Message == "" || (d.Severity != SeverityError && d.Severity != SeverityWarning) {
			t.Errorf("diagnostic without message or severity: %+v", d)
		}
	}
}

// yamlLines is an upper bound of the number of lines of data as YAML counts them (it also
// breaks lines at a lone CR, NEL, LS and PS); an error may be reported just past the end.
func yamlLines(data []byte) int {
	n := 2 + bytes.Count(data, []byte("\n")) + bytes.Count(data, []byte("\r"))
	for _, r := range []string{"\u0085", "\u2028", "\u2029"} {
		n += bytes.Count(data, []byte(r))
	}
	return n
}

// describeDocs renders decoded documents for comparison (objects may hold NaN, which
// reflect.DeepEqual never finds equal).
func describeDocs(t *testing.T, docs []document) string {
	t.Helper()
	var b strings.Builder
	for _, d := range docs {
		out, err := yaml.Marshal(d.object)
		if err != nil {
			t.Fatalf("marshal %s/%s: %v", d.kind, d.name, err)
		}
		b.WriteString(d.kind + "/" + d.name + "@" + d.source.File + ":" + strconv.Itoa(d.source.Line) + "\n")
		for _, p := range slices.Sorted(maps.Keys(d.source.lines)) {
			b.WriteString(p + "=" + strconv.Itoa(d.source.lines[p]) + "\n")
		}
		b.Write(out)
	}
	return b.String()
}

// fuzzSeeds are inputs the fixture does not cover: syntax errors between good documents,
// aliases and merge keys, alias bombs, deep nesting, odd line breaks.
var fuzzSeeds = []string{
	"",
	"---\n---\n# c\n...\n",
	"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n---\nkind: [\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b\n",
	"apiVersion: v1\nkind: ConfigMap\nmetadata:\n\tname: a\n",
	"--- [\n--- {\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n",
	"apiVersion: v1\nkind: ConfigMap\nmetadata: &m {name: a}\ndata: *m\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: *m\n",
	"apiVersion: scheduler.kalypso.io/v1alpha1\nkind: ClusterType\nmetadata: {name: a, labels: {<<: {a: b}}}\nspec:\n  <<: [{reconciler: a}, {namespaceService: b}]\n  configType: c\n",
	// An alias bomb where nothing checks it but the decoder (status is free-form).
	"apiVersion: scheduler.kalypso.io/v1alpha1\nkind: Workload\nmetadata: {name: w}\nspec: {deploymentTargets: []}\nstatus:\n" + bomb("s", 8, "x"),
	// Alias bombs in typed fields: the strict walk follows every alias.
	"apiVersion: scheduler.kalypso.io/v1alpha1\nkind: Workload\nmetadata: {name: w}\nstatus:\n" + bomb("s", 3, "x") +
		"  t: &t {name: x, environment: dev, manifests: {}, configSchemas: *s3}\n" +
		"  l: &l [*t,*t,*t,*t,*t,*t,*t,*t,*t,*t]\nspec:\n  deploymentTargets: *l\n",
	"apiVersion: scheduler.kalypso.io/v1alpha1\nkind: ClusterType\nmetadata: {name: a}\nstatus:\n" + bomb("m", 7, "{}") +
		"spec:\n  <<: *m7\n  reconciler: a\n",
	"apiVersion: scheduler.kalypso.io/v1alpha1\nkind: ClusterType\nmetadata: {name: a}\nstatus:\n" + bomb("m", 3, "{x: 1}") +
		"spec:\n  <<: *m3\n",
	"apiVersion: scheduler.kalypso.io/v1alpha1\nkind: Workload\nmetadata: {name: w}\nstatus:\n" + bomb("s", 3, "x") +
		"spec:\n  deploymentTargets:\n  - {name: a, environment: dev, manifests: {}, configSchemas: *s3}\n",
	// Deep nesting.
	"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\nbinaryData: " + strings.Repeat("[", 500) + strings.Repeat("]", 500) + "\n",
	"apiVersion: scheduler.kalypso.io/v1alpha1\nkind: Workload\nmetadata: {name: w}\nstatus: " + strings.Repeat("{a: ", 500) + "1" + strings.Repeat("}", 500) + "\n",
	strings.Repeat("[", 200) + strings.Repeat("]", 200) + "\n",
	"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\nbinaryData:\n" + strings.Repeat("  k: v\n", 3),
	"apiVersion: v1\rkind: ConfigMap\rmetadata:\r  name: a\r  naem: b\r",
	"apiVersion: v1\r\nkind: ConfigMap\r\nmetadata:\r\n  name: a\r\n---\r\nx: [\r\n",
	"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  generation: 1e400\n  creationTimestamp: 2001-12-14t21:59:43.10-05:00\nimmutable: yes\n",
	"%YAML 1.1\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n",
	"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\ndata: {a: *unknown}\n",
	"? [a]\n: b\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, ? {x: y} : z}\n",
	"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: !!binary aGVsbG8=\n",
	"\xef\xbb\xbfapiVersion: v1\nkind: ConfigMap\nmetadata: {name: bom}\n",
	"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\ndata:\n  x: \"\x00\"\n",
}
