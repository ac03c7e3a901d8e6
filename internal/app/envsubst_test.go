package app

import (
	"errors"
	"strings"
	"testing"
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
		{"x: $A\n", "x: 1\n"},
		{"x: ${B_2}-$A$A ${A}B $VERSION\n", "x: two-11 1B 1.4.2\n"},
		{"x: $$A costs $5 and ${\n", "x: $A costs $5 and ${\n"},
		{"x: $${A} $$VERSION\n", "x: ${A} $VERSION\n"},
		// Names the run does not define are left as they are, $$ too.
		{"x: $svcName ${svcName} $$svcName $AB $A_ ${ A}\n", "x: $svcName ${svcName} $$svcName $AB $A_ ${ A}\n"},
		{"- $patch: delete\n", "- $patch: delete\n"},
		{"cmd: echo $$ $$HOME $$$A $$${A}\n", "cmd: echo $$ $$HOME $$1 $$1\n"},
		{"# $DECL in a comment\n  # ${IMAGE_TAG}\nx: y\n", "# $DECL in a comment\n  # ${IMAGE_TAG}\nx: y\n"},
		{"x: $", "x: $"},
		{"x: $$", "x: $$"},
	} {
		got, err := Subst("f.yaml", []byte(c.in), vars)
		if err != nil || string(got) != c.want {
			t.Errorf("Subst(%q) = %q, %v; want %q", c.in, got, err, c.want)
		}
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
	f.Fuzz(func(t *testing.T, text string) {
		vars := testVars(t)
		out, err := Subst("f", []byte(text), vars)
		if err != nil {
			checkSubstErrors(t, err, vars)
			return
		}
		if !strings.Contains(text, "$") && string(out) != text {
			t.Fatalf("changed text without $: %q -> %q", text, out)
		}
		if !mentionsAny(text, vars.Names()) && string(out) != text {
			t.Fatalf("changed text without a defined name: %q -> %q", text, out)
		}
		if none, _ := Subst("f", []byte(text), Vars{}); string(none) != text {
			t.Fatalf("nothing defined, yet %q -> %q", text, none)
		}
	})
}

// checkSubstErrors fails unless err joins SubstErrors of defined variables without a value.
func checkSubstErrors(t *testing.T, err error, vars Vars) {
	t.Helper()
	errs := []error{err}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		errs = j.Unwrap()
	}
	for _, e := range errs {
		var se *SubstError
		if !errors.As(e, &se) || se.Line < 1 || !vars.Defined(se.Name) {
			t.Fatalf("error %v", e)
		}
		if _, ok := vars.Value(se.Name); ok {
			t.Fatalf("%s has a value, yet %v", se.Name, e)
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
