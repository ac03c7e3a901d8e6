package app

import (
	"reflect"
	"testing"

	"helm.sh/helm/v3/pkg/chartutil"
)

// TestSubstYAML11Booleans: a substituted value that YAML 1.1 reads as a boolean when plain
// (NO, off, y…) is written quoted, so that Helm, which reads values files as YAML 1.1, reads
// the string, in a key as in a value; a value that was not substituted is left as written
// (yes, a boolean to Helm, stays one), and so is an explicit tag.
func TestSubstYAML11Booleans(t *testing.T) {
	vars, err := NewVars(map[string]string{"COUNTRY": "NO", "DEBUG": "off", "KEY": "y", "RATIO": "1:30", "FLAG": "true"}, nil, "", "")
	if err != nil {
		t.Fatal(err)
	}
	in := []byte("country: $COUNTRY\ndebug: '$DEBUG'\n$KEY: 1\nratio: $RATIO\nflag: $FLAG\ntyped: !!bool $FLAG\nlegacy: yes\n")
	out, err := Subst("values.yaml", in, vars)
	if err != nil {
		t.Fatal(err)
	}
	want := "country: \"NO\"\ndebug: 'off'\n\"y\": 1\nratio: 1:30\nflag: \"true\"\ntyped: !!bool true\nlegacy: yes\n"
	if string(out) != want {
		t.Errorf("substituted:\n%s\nwant:\n%s", out, want)
	}
	read := map[string]any{"country": "NO", "debug": "off", "y": float64(1), "ratio": "1:30", "flag": "true", "typed": true, "legacy": true}
	if got, err := chartutil.ReadValues(out); err != nil || !reflect.DeepEqual(map[string]any(got), read) {
		t.Errorf("Helm reads %#v, %v; want %#v", got, err, read)
	}
	l, err := ParseLayer(Source{File: "values.yaml"}, in, vars)
	if err != nil || !reflect.DeepEqual(l.data, read) {
		t.Errorf("layer %#v, %v; want %#v", l.data, err, read)
	}
}
