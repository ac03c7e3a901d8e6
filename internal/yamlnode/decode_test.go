package yamlnode

import (
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	yaml "go.yaml.in/yaml/v3"

	"github.com/fleetform/fleetform/api/v1alpha1"
)

type inner struct {
	Kind string `yaml:"kind"`
	Tags []string
}

type item struct {
	Name  string `yaml:"name"`
	Value any    `yaml:"value,omitempty"`
}

// sample has a field of every shape Decode handles itself, and some it leaves to yaml.v3.
type sample struct {
	inner  `yaml:",inline"`
	Name   string            `yaml:"name"`
	Count  int               `yaml:"count,omitempty"`
	Small  int8              `yaml:"small"`
	U      uint16            `yaml:"u"`
	Ratio  float64           `yaml:"ratio"`
	On     *bool             `yaml:"on"`
	Labels map[string]string `yaml:"labels,flow"`
	Items  []item            `yaml:"items"`
	Ptr    *item             `yaml:"ptr"`
	Any    any               `yaml:"any"`
	AnyMap map[string]any    `yaml:"anyMap"`
	Keyed  map[int]string    `yaml:"keyed"`
	Strs   []string          `yaml:"strs"`
	Wait   time.Duration     `yaml:"wait"`
	When   time.Time         `yaml:"when"`
	Node   yaml.Node         `yaml:"node"`
	Array  [2]string         `yaml:"array"`
	Skip   string            `yaml:"-"`
	Named  named             `yaml:"named"`
	Lower  string
}

type named string

// Exported is inlined through a pointer.
type Exported struct {
	Extra  string `yaml:"extra"`
	Number int
}

// pointed has a pointer-inlined struct and no field Decode leaves to yaml.v3.
type pointed struct {
	*Exported `yaml:",inline"`
	Name      string            `yaml:"name"`
	Labels    map[string]string `yaml:"labels"`
	Items     []*item           `yaml:"items"`
	Any       any               `yaml:"any"`
}

// targets are the types the tests decode into, each as a function returning a new pointer.
var targets = []func() any{
	func() any { return new(any) },
	func() any { return new(map[string]any) },
	func() any { return new([]any) },
	func() any { return new(map[string]string) },
	func() any { return new([]string) },
	func() any { return new(string) },
	func() any { return new(sample) },
	func() any { return new(*sample) },
	func() any { return new([]sample) },
	func() any { return new(pointed) },
	func() any { return new(v1alpha1.ConfigMap) },
	func() any { return new(v1alpha1.Workload) },
	func() any { return new(v1alpha1.ClusterType) },
}

// decodeSeeds cover the decoder's paths: merges, aliases, nulls, duplicates, tags, errors.
var decodeSeeds = []string{
	"name: a\ncount: 3\nlabels: {x: y}\nitems: [{name: i, value: 1}, {name: j}]\n",
	"kind: k\ntags: [a, b]\nname: n\nptr: {name: p}\nany: {a: [1, 2.5, true, ~, x]}\n",
	"base: &b {name: x, count: 1}\nitems: [{<<: *b, name: y}]\n",
	"a: &a {x: 1}\nb: &b {y: 2}\nc: {<<: [*a, *b], x: 3}\n",
	"<<: {name: m, count: 2}\nname: own\n",
	"name: a\nname: b\n",
	"labels: {a: 1, b: 2, a: 3}\n",
	"a: 1\nb: 2\na: 3\nb: 4\na: 5\n",
	"strs: [a, ~, b, null, '']\n",
	"labels: {a: ~, b: x}\n",
	"on: ~\nptr: ~\nany: ~\nname: ~\n",
	"on: yes\nsmall: 300\nu: -1\nratio: 1e3\ncount: 0x1F\n",
	"wait: 5s\nwhen: 2001-12-14t21:59:43.10-05:00\nnode: {a: b}\narray: [x, y]\n",
	"array: [x]\n",
	"a: &x [*x]\n",
	"a: &a [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\nc: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\nd: [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]\n",
	"? [a]\n: b\n",
	"? {a: b}\n: c\n",
	"{1: a, 1.5: b, true: c, ~: d, 2001-12-14: e}\n",
	"&k a: 1\n*k : 2\n",
	"x: !!binary aGVsbG8=\ny: !!binary '%%%'\n",
	"x: !!int abc\n",
	"x: !!str 12\ny: !!float 1\nz: !custom v\n",
	"<<: 1\n",
	"<<: [1]\n",
	"a: &s str\n<<: *s\n",
	"keyed: {1: a, 0x2: b, x: c}\n",
	"named: n\nlower: l\nskip: s\n",
	"extra: e\nnumber: 7\nname: n\nitems: [{name: a}, ~, {name: b, value: [1]}]\n",
	"<<: {extra: x, name: m}\nextra: y\n",
	"inner: {kind: k}\nkind: j\n",
	"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, labels: {a: b}, managedFields: [{f: {x: 1, x: 2}}]}\ndata: {k: v}\n",
	"- a\n- [b, c]\n- {d: e}\n",
	"plain\n",
	"'quoted'\n",
	"~\n",
	"",
}

func FuzzDecode(f *testing.F) {
	for _, s := range decodeSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var doc yaml.Node
		if err := yaml.Unmarshal([]byte(s), &doc); err != nil {
			return
		}
		for _, newTarget := range targets {
			compare(t, s, &doc, newTarget)
		}
	})
}

// compare decodes doc with yaml.v3 and with Decode into new targets and fails if the values
// or the errors differ.
func compare(t *testing.T, in string, doc *yaml.Node, newTarget func() any) {
	t.Helper()
	want, got := newTarget(), newTarget()
	panicked, wantErr := decodeV3(doc, want)
	if panicked {
		return // a yaml.v3 bug: nothing to compare with
	}
	gotErr := Decode(doc, got)
	typ := reflect.TypeOf(want).Elem()
	if (wantErr == nil) != (gotErr == nil) {
		t.Fatalf("%q into %s: error %v, yaml.v3 says %v", in, typ, gotErr, wantErr)
	}
	if wantErr != nil {
		if w, g := firstError(wantErr), firstError(gotErr); w != g {
			t.Fatalf("%q into %s: first error %q, yaml.v3 says %q", in, typ, g, w)
		}
		return // yaml.v3's partial result is not part of its contract
	}
	if !equal(reflect.ValueOf(want), reflect.ValueOf(got)) {
		t.Fatalf("%q into %s:\n got %#v\nwant %#v", in, typ, reflect.ValueOf(got).Elem(), reflect.ValueOf(want).Elem())
	}
}

// decodeV3 decodes doc into v with yaml.v3, reporting whether yaml.v3 panicked.
func decodeV3(doc *yaml.Node, v any) (panicked bool, err error) {
	defer func() {
		if r := recover(); r != nil {
			panicked = true
		}
	}()
	return false, doc.Decode(v)
}

// firstError returns the first line of a decoding error's message.
func firstError(err error) string {
	s := strings.TrimPrefix(err.Error(), "yaml: unmarshal errors:\n  ")
	first, _, _ := strings.Cut(s, "\n")
	return first
}

// equal is reflect.DeepEqual, except that NaN equals NaN and maps with NaN keys (which no
// lookup finds) are compared by their other keys and their sizes.
func equal(a, b reflect.Value) bool {
	if a.IsValid() != b.IsValid() {
		return false
	}
	if !a.IsValid() {
		return true
	}
	if a.Type() != b.Type() {
		return false
	}
	switch a.Kind() {
	case reflect.Float32, reflect.Float64:
		return a.Float() == b.Float() || math.IsNaN(a.Float()) && math.IsNaN(b.Float())
	case reflect.Pointer, reflect.Interface:
		if a.IsNil() || b.IsNil() {
			return a.IsNil() == b.IsNil()
		}
		return equal(a.Elem(), b.Elem())
	case reflect.Slice, reflect.Array:
		if a.Kind() == reflect.Slice && a.IsNil() != b.IsNil() || a.Len() != b.Len() {
			return false
		}
		for i := range a.Len() {
			if !equal(a.Index(i), b.Index(i)) {
				return false
			}
		}
		return true
	case reflect.Map:
		if a.IsNil() != b.IsNil() || a.Len() != b.Len() {
			return false
		}
		for it := a.MapRange(); it.Next(); {
			if k := it.Key(); isNaN(k) {
				continue
			}
			if !equal(it.Value(), b.MapIndex(it.Key())) {
				return false
			}
		}
		return true
	case reflect.Struct:
		if a.Type() == reflect.TypeFor[time.Time]() {
			return a.Interface().(time.Time).Equal(b.Interface().(time.Time))
		}
		for i := range a.NumField() {
			if !equal(a.Field(i), b.Field(i)) {
				return false
			}
		}
		return true
	default:
		return reflect.DeepEqual(valueOf(a), valueOf(b))
	}
}

func isNaN(v reflect.Value) bool {
	if v.Kind() == reflect.Interface {
		v = v.Elem()
	}
	return (v.Kind() == reflect.Float64 || v.Kind() == reflect.Float32) && math.IsNaN(v.Float())
}

// valueOf returns what a value holds, unexported fields included.
func valueOf(v reflect.Value) any {
	switch v.Kind() {
	case reflect.String:
		return v.String()
	case reflect.Bool:
		return v.Bool()
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return v.Int()
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return v.Uint()
	default:
		return fmt.Sprint(v)
	}
}

// TestDecodeSeeds runs the fuzz seeds against yaml.v3 with every target.
func TestDecodeSeeds(t *testing.T) {
	for _, s := range decodeSeeds {
		var doc yaml.Node
		if err := yaml.Unmarshal([]byte(s), &doc); err != nil {
			t.Fatalf("seed %q: %v", s, err)
		}
		for _, newTarget := range targets {
			compare(t, s, &doc, newTarget)
		}
	}
}

// TestDecodeDuplicateKeys: every repetition of a key is an error naming the line of the
// key's first occurrence, in the order yaml.v3 reports them, in any mapping decoded.
func TestDecodeDuplicateKeys(t *testing.T) {
	t.Parallel()
	in := "a: 1\nb: 2\nb: 3\na: 4\nc: {x: 1, x: 2}\na: 5\n"
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(in), &doc); err != nil {
		t.Fatal(err)
	}
	want := "yaml: unmarshal errors:\n" +
		"  line 4: mapping key \"a\" already defined at line 1\n" +
		"  line 6: mapping key \"a\" already defined at line 1\n" +
		"  line 3: mapping key \"b\" already defined at line 2"
	for _, target := range []any{new(any), new(map[string]any), new(sample)} {
		if err := Decode(&doc, target); err == nil || err.Error() != want {
			t.Errorf("into %T: error\n%v\nwant\n%s", target, err, want)
		}
	}
	var nested any
	if err := Decode(doc.Content[0].Content[9], &nested); err == nil || !strings.Contains(err.Error(), `line 5: mapping key "x" already defined at line 5`) {
		t.Errorf("nested mapping: error %v", err)
	}
}

// TestDecodeManyKeys decodes mappings of 50,000 keys, into a map and into any, and a
// key repeated at their end.
func TestDecodeManyKeys(t *testing.T) {
	t.Parallel()
	const keys = 50_000
	var b strings.Builder
	for i := range keys {
		fmt.Fprintf(&b, "k%06d: v%d\n", i, i)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(b.String()), &doc); err != nil {
		t.Fatal(err)
	}
	var m map[string]string
	var v any
	if err := Decode(&doc, &m); err != nil || len(m) != keys || m["k012345"] != "v12345" {
		t.Fatalf("into a map: %d keys, k012345 = %q, error %v", len(m), m["k012345"], err)
	}
	if err := Decode(&doc, &v); err != nil || len(v.(map[string]any)) != keys {
		t.Fatalf("into any: %T, error %v", v, err)
	}
	b.WriteString("k000007: again\n")
	if err := yaml.Unmarshal([]byte(b.String()), &doc); err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("yaml: unmarshal errors:\n  line %d: mapping key \"k000007\" already defined at line 8", keys+1)
	if err := Decode(&doc, &m); err == nil || err.Error() != want {
		t.Fatalf("error %v, want %s", err, want)
	}
}

// TestStructInfo: struct keys are found as yaml.v3 finds them; structs with inline maps are
// left to yaml.v3.
func TestStructInfo(t *testing.T) {
	t.Parallel()
	si := newStructInfo(reflect.TypeFor[sample]())
	if si == nil {
		t.Fatal("sample is left to yaml.v3")
	}
	for _, key := range []string{"kind", "tags", "name", "lower", "anyMap", "node"} {
		if _, ok := si.byKey[key]; !ok {
			t.Errorf("no field for key %q", key)
		}
	}
	for _, key := range []string{"skip", "Skip", "inner"} {
		if _, ok := si.byKey[key]; ok {
			t.Errorf("a field for key %q", key)
		}
	}
	if got := si.fields[si.byKey["tags"]].index; !reflect.DeepEqual(got, []int{0, 1}) {
		t.Errorf("tags at %v, want [0 1]", got)
	}
	type withInlineMap struct {
		Name string         `yaml:"name"`
		Rest map[string]any `yaml:",inline"`
	}
	if newStructInfo(reflect.TypeFor[withInlineMap]()) != nil {
		t.Error("a struct with an inline map is not left to yaml.v3")
	}
}
