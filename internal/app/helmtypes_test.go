package app_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/fleetform/fleetform/internal/controlplane"
	"github.com/fleetform/fleetform/internal/testutil/gittest"
)

// typesChart prints every top-level value as {{ .Values.x }} prints it, and its Go type.
const typesChart = `apiVersion: v1
kind: ConfigMap
metadata:
  name: types
data:
{{- range $k, $v := .Values }}
  {{ $k | quote }}: "{{ $v }} ({{ printf "%T" $v }})"
{{- end }}
`

// helmTypes are values files' lines and what real helm prints for them. The expected
// outputs were observed with helm v3.22.0 (built from the module proxy: go install
// helm.sh/helm/v3/cmd/helm@v3.22.0), `helm template types . -f config.yaml`, on a chart
// with typesChart as its template, the source lines as its values.yaml and the config lines
// as config.yaml; helm printed the same for the source lines given with -f.
var helmTypes = []struct {
	source, config string // a line of the chart's values.yaml, of the target's config values.yaml
	key, want      string // the key helm reads, and what it printed
}{
	// Every number goes through JSON: a float64, printed with %v.
	{source: "int: 42", config: "int: 1_000_000", key: "int", want: "1e+06 (float64)"},
	{source: "million: 1000000", key: "million", want: "1e+06 (float64)"},
	{source: "float: 1.5", key: "float", want: "1.5 (float64)"},
	{source: "big: 12345678901234567890", key: "big", want: "1.2345678901234567e+19 (float64)"},
	{source: "maxInt64: 9223372036854775807", key: "maxInt64", want: "9.223372036854776e+18 (float64)"},
	{source: "hex: 0x1F", key: "hex", want: "31 (float64)"},
	{source: "octal: 0o17", key: "octal", want: "15 (float64)"},
	{source: "octalOld: 010", key: "octalOld", want: "8 (float64)"},
	{source: "underscore: 1_000", key: "underscore", want: "1000 (float64)"},
	{source: "binary: 0b101", key: "binary", want: "5 (float64)"},
	{source: "exponent: 1e3", key: "exponent", want: "1000 (float64)"},
	{source: "sci: 6.02e23", key: "sci", want: "6.02e+23 (float64)"},
	{source: "negative: -42", key: "negative", want: "-42 (float64)"},
	{source: "plus: +7", key: "plus", want: "7 (float64)"},
	{source: "dot: .5", key: "dot", want: "0.5 (float64)"},
	{config: "fromConfig: 0o10", key: "fromConfig", want: "8 (float64)"},
	// Timestamps and quoted scalars stay strings.
	{source: "date: 2001-12-14", key: "date", want: "2001-12-14 (string)"},
	{source: "stamp: 2001-12-14T21:59:43.10Z", key: "stamp", want: "2001-12-14T21:59:43.10Z (string)"},
	{source: `quotedNumber: "1000000"`, key: "quotedNumber", want: "1000000 (string)"},
	{source: `quotedOn: "on"`, key: "quotedOn", want: "on (string)"},
	// YAML 1.1 booleans: y, yes, on, true and n, no, off, false, in lower, Title or UPPER case.
	{source: "vOn: on", config: "vOn: n", key: "vOn", want: "false (bool)"},
	{source: "vOff: Off", key: "vOff", want: "false (bool)"},
	{source: "vYes: YES", key: "vYes", want: "true (bool)"},
	{source: "vNo: no", key: "vNo", want: "false (bool)"},
	{source: "vY: y", key: "vY", want: "true (bool)"},
	{source: "vN: N", key: "vN", want: "false (bool)"},
	{source: "vTrue: True", key: "vTrue", want: "true (bool)"},
	{source: "vFalse: FALSE", key: "vFalse", want: "false (bool)"},
	{source: "notBool: yEs", key: "notBool", want: "yEs (string)"},
	// Keys are resolved the same way, then made strings.
	{source: "on: keyOn", key: "true", want: "keyOn (string)"},
	{source: "0x10: hexKey", key: "16", want: "hexKey (string)"},
	{source: "1.5: floatKey", key: "1.5", want: "floatKey (string)"},
	// Merge keys are expanded, as yaml.v2 does: a merge replaces the keys before it, and of
	// a list of mappings the first wins.
	{source: "base: &base\n  a: 1\n  b: two", key: "base", want: "map[a:1 b:two] (map[string]interface {})"},
	{source: "merged:\n  <<: *base\n  b: three", key: "merged", want: "map[a:1 b:three] (map[string]interface {})"},
	{source: "mergedBefore:\n  b: first\n  <<: *base", key: "mergedBefore", want: "map[a:1 b:two] (map[string]interface {})"},
	{source: "mergeList:\n  <<: [*base, {b: listed, c: 3}]", key: "mergeList", want: "map[a:1 b:two c:3] (map[string]interface {})"},
	{source: "alias: *base", key: "alias", want: "map[a:1 b:two] (map[string]interface {})"},
	{source: `list: [1, 2.5, yes, "x", 0x10]`, key: "list", want: "[1 2.5 true x 16] ([]interface {})"},
}

// TestValuesTypedAsHelm renders a chart with the values of helmTypes and compares what it
// prints, and the composed values, with what helm v3.22.0 printed.
func TestValuesTypedAsHelm(t *testing.T) {
	var values, config strings.Builder
	for _, c := range helmTypes {
		if c.source != "" {
			fmt.Fprintln(&values, c.source)
		}
		if c.config != "" {
			fmt.Fprintln(&config, c.config)
		}
	}
	source, cfg := gittest.New(t), gittest.New(t)
	source.Commit(t, "main", map[string]string{
		"workload.yaml": "apiVersion: scheduler.kalypso.io/v1alpha1\nkind: Workload\nmetadata:\n  name: types\nspec:\n  deploymentTargets:\n" +
			"    - name: types\n      environment: dev\n      manifests: {repo: https://example.com/gitops, branch: dev, path: types}\n",
		"helm/Chart.yaml":           "apiVersion: v2\nname: types\nversion: 0.1.0\n",
		"helm/templates/types.yaml": typesChart,
		"helm/values.yaml":          values.String(),
	})
	cfg.Commit(t, "dev", map[string]string{"types/values.yaml": config.String()})
	repos := controlplane.NewRepos(nil, nil, nil)
	r := newRun(t, loadApp(t, repos, source.Dir), openRepo(t, repos, cfg.Dir), "dev", "", nil, "")
	target, _ := r.Target("types")
	folder, err := r.Render(t.Context(), target)
	if err != nil {
		t.Fatal(err)
	}
	out := string(folder.Files["configmap-types.yaml"])
	for _, c := range helmTypes {
		line := strings.TrimSpace(c.source + "\n" + c.config)
		if want := fmt.Sprintf("  %q: %q\n", c.key, c.want); !strings.Contains(out, want) {
			t.Errorf("%s: helm printed %s", line, want)
		}
		// The composed values (schema, explain, the digest) hold what helm holds.
		v, ok := target.Values.Data[c.key]
		if got := fmt.Sprintf("%v (%T)", v, v); !ok || got != c.want {
			t.Errorf("%s: the composed values hold %s, helm %s", line, got, c.want)
		}
	}
	if t.Failed() {
		t.Logf("fleetform printed:\n%s", out)
	}
}
