package app

import (
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// testVars defines A and B_2 with values, DECL declared without one, and VERSION and
// IMAGE_TAG (IMAGE_TAG without a value).
func testVars(tb testing.TB) Vars {
	tb.Helper()
	v, err := NewVars(map[string]string{"A": "1", "B_2": "two"}, []string{"DECL"}, "1.4.2", "")
	if err != nil {
		tb.Fatal(err)
	}
	return v
}

func TestSubst(t *testing.T) {
	vars := testVars(t)
	for _, c := range []struct{ in, want string }{
		{"x: $A\n", "x: \"1\"\n"},
		{"x: ${B_2}-$A$A ${A}B $VERSION\n", "x: two-11 1B 1.4.2\n"},
		{"x: $$A costs $5 and ${\n", "x: $A costs $5 and ${\n"},
		{"x: $${A} $$VERSION\n", "x: ${A} $VERSION\n"},
		// Names the run does not define are left as they are, $$ too.
		{"x: $svcName ${svcName} $$svcName $AB $A_ ${ A}\n", "x: $svcName ${svcName} $$svcName $AB $A_ ${ A}\n"},
		{"- $patch: delete\n", "- $patch: delete\n"},
		{"cmd: echo $$ $$HOME $$$A $$${A}\n", "cmd: echo $$ $$HOME $$1 $$1\n"},
		// Comments are not values.
		{"# $DECL in a comment\n  # ${IMAGE_TAG}\nx: y\n", "# $DECL in a comment\n  # ${IMAGE_TAG}\nx: y\n"},
		{"x: $A # $DECL\n", "x: \"1\" # $DECL\n"},
		{"x: $", "x: $"},
		{"x: $$", "x: $$"},
		// The quoting written is kept; a key is a string too.
		{"'$A': '$B_2'\n", "'1': 'two'\n"},
		{"x: !!int $A\n", "x: !!int 1\n"},
		{"---\na: $A\n---\nb: $B_2\n", "a: \"1\"\n---\nb: two\n"},
	} {
		got, err := Subst("f.yaml", []byte(c.in), vars)
		if err != nil || string(got) != c.want {
			t.Errorf("Subst(%q) = %q, %v; want %q", c.in, got, err, c.want)
		}
	}
}

// TestSubstKeepsStructure: a value is a string value, whatever it holds: it does not become
// a number, lose what follows a "#", end its quotes or add keys.
func TestSubstKeepsStructure(t *testing.T) {
	for _, c := range []struct {
		value, in string
		want      any
	}{
		{"1.10", "v: $VERSION\n", "1.10"},
		{"1.10", "v: \"$VERSION\"\n", "1.10"},
		{"0012", "v: $VERSION\n", "0012"},
		{"true", "v: $VERSION\n", "true"},
		{"1.0 # x", "v: $VERSION\n", "1.0 # x"},
		{"x\nextra: injected", "v: $VERSION\n", "x\nextra: injected"},
		{"a\" , b: \"c", "v: \"$VERSION\"\n", "a\" , b: \"c"},
		{"a' , b: 'c", "v: '$VERSION'\n", "a' , b: 'c"},
		{"x}, b: {c", "v: {k: $VERSION}\n", map[string]any{"k": "x}, b: {c"}},
		{"3", "v: !!int $VERSION\n", 3},
	} {
		vars, err := NewVars(nil, nil, c.value, "")
		if err != nil {
			t.Fatal(err)
		}
		out, err := Subst("f.yaml", []byte(c.in), vars)
		if err != nil {
			t.Errorf("Subst(%q) with VERSION=%q: %v", c.in, c.value, err)
			continue
		}
		var got map[string]any
		if err := yaml.Unmarshal(out, &got); err != nil {
			t.Errorf("Subst(%q) with VERSION=%q gave %q, not YAML: %v", c.in, c.value, out, err)
			continue
		}
		if want := map[string]any{"v": c.want}; !reflect.DeepEqual(got, want) {
			t.Errorf("Subst(%q) with VERSION=%q gave %q = %#v; want %#v", c.in, c.value, out, got, want)
		}
	}
}

func TestSubstRefusesAValueNotOfItsTag(t *testing.T) {
	vars, err := NewVars(map[string]string{"REPLICAS": "three"}, nil, "", "")
	if err != nil {
		t.Fatal(err)
	}
	_, err = Subst("cfg/values.yaml", []byte("image: x\nreplicas: !!int $REPLICAS\n"), vars)
	if err == nil || !strings.Contains(err.Error(), `cfg/values.yaml:2: !!int "three": the substituted value is not of its tag`) {
		t.Errorf("error %v", err)
	}
}

func TestSubstNoValue(t *testing.T) {
	_, err := Subst("cfg/values.yaml", []byte("a: $svc\nimage: $DECL:${IMAGE_TAG}\nv: $VERSION\n"), testVars(t))
	var se *SubstError
	if !errors.As(err, &se) || se.Line != 2 || se.File != "cfg/values.yaml" || se.Name != "DECL" {
		t.Fatalf("error %v", err)
	}
	for _, s := range []string{"cfg/values.yaml:2: variable DECL is not set (give it with --var DECL=VALUE)",
		"cfg/values.yaml:2: variable IMAGE_TAG is not set (give it with --image-tag)"} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("error lacks %q: %v", s, err)
		}
	}
	t.Setenv("FROM_ENV", "leak")
	v, err := NewVars(nil, []string{"FROM_ENV"}, "", "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Subst("f", []byte("x: $FROM_ENV\n"), v); err == nil {
		t.Error("the process environment was used")
	}
}

func TestNewVarsRefusesBadNames(t *testing.T) {
	if _, err := NewVars(map[string]string{"1X": "v"}, nil, "", ""); err == nil || !strings.Contains(err.Error(), `"1X" is not a variable name`) {
		t.Errorf("--var 1X: %v", err)
	}
	if _, err := NewVars(nil, []string{"IMAGE-NAME"}, "", ""); err == nil || !strings.Contains(err.Error(), "fleetform-app.yaml: variables:") {
		t.Errorf("declared IMAGE-NAME: %v", err)
	}
}

func TestCheckVariables(t *testing.T) {
	data := []byte("chart: helm\nvariables:\n  - IMAGE_NAME\n  - 2REGION\n")
	err := checkVariables(data, []string{"IMAGE_NAME", "2REGION"})
	if err == nil || !strings.Contains(err.Error(), `fleetform-app.yaml:4: variables: "2REGION" is not a variable name`) {
		t.Errorf("error %v", err)
	}
}

func FuzzSubst(f *testing.F) {
	f.Add("image: $IMAGE_NAME:${IMAGE_TAG}\n# $X\nv: $$V $1 ${\n")
	f.Add("cmd: $$ $$A $$$A $${DECL} $svcName $patch\n")
	f.Add("a: [$A, {b: '$B_2'}]\n---\n- &x $VERSION\n- *x\n")
	f.Add("--- \n--- $A") // an empty first document stays one
	f.Fuzz(func(t *testing.T, text string) {
		vars := testVars(t)
		out, err := Subst("f", []byte(text), vars)
		if err != nil {
			checkSubstErrors(t, text, err, vars)
			return
		}
		if !mentionsAny(text, vars.Names()) && string(out) != text {
			t.Fatalf("changed text without a defined name: %q -> %q", text, out)
		}
		if none, _ := Subst("f", []byte(text), Vars{}); string(none) != text {
			t.Fatalf("nothing defined, yet %q -> %q", text, none)
		}
		if string(out) != text && shape(t, text) != shape(t, string(out)) {
			t.Fatalf("substitution changed the structure: %q -> %q", text, out)
		}
	})
}

// shape describes the structure of every document of text: kinds and sizes, not values.
func shape(t *testing.T, text string) string {
	t.Helper()
	var b strings.Builder
	var walk func(*yaml.Node)
	walk = func(n *yaml.Node) {
		fmt.Fprintf(&b, "%d(", n.Kind)
		for _, c := range n.Content {
			walk(c)
		}
		b.WriteString(")")
	}
	dec := yaml.NewDecoder(strings.NewReader(text))
	for {
		var doc yaml.Node
		if err := dec.Decode(&doc); err != nil {
			if !errors.Is(err, io.EOF) {
				t.Fatalf("%q does not parse: %v", text, err)
			}
			return b.String()
		}
		walk(&doc)
	}
}

// checkSubstErrors fails unless err joins SubstErrors of defined variables without a value,
// or text is not YAML.
func checkSubstErrors(t *testing.T, text string, err error, vars Vars) {
	t.Helper()
	if !parses(text) {
		return
	}
	errs := []error{err}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		errs = j.Unwrap()
	}
	for _, e := range errs {
		var se *SubstError
		if errors.As(e, &se) && se.Line >= 1 && vars.Defined(se.Name) {
			if _, ok := vars.Value(se.Name); ok {
				t.Fatalf("%s has a value, yet %v", se.Name, e)
			}
			continue
		}
		if !strings.Contains(e.Error(), "the substituted value is not of its tag") {
			t.Fatalf("error %v", e)
		}
	}
}

// parses reports whether every document of text is YAML.
func parses(text string) bool {
	dec := yaml.NewDecoder(strings.NewReader(text))
	for {
		var doc yaml.Node
		if err := dec.Decode(&doc); err != nil {
			return errors.Is(err, io.EOF)
		}
	}
}

func mentionsAny(text string, names []string) bool {
	for _, n := range names {
		if strings.Contains(text, n) {
			return true
		}
	}
	return false
}
