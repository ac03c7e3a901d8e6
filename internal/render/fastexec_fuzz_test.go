package render_test

import (
	"errors"
	"fmt"
	"reflect"
	"testing"

	"github.com/fleetform/fleetform/api/v1alpha1"
	"github.com/fleetform/fleetform/internal/compose"
	"github.com/fleetform/fleetform/internal/controlplane"
	"github.com/fleetform/fleetform/internal/render"
	"github.com/fleetform/fleetform/internal/schedule"
)

// fastFragments are the pieces of the templates FuzzFastExecutor generates: what the
// engine's templates are made of, on data with absent keys, nulls, lists and maps.
var fastFragments = []string{
	"{{ .Namespace }}", "{{ .DeploymentTargetName | quote }}", "{{ .Manifests.repo }}", "{{ .Manifests.missing }}",
	"{{ .ConfigData.s }}", "{{ .ConfigData.n }}", "{{ .ConfigData.f }}", "{{ .ConfigData.b }}", "{{ .ConfigData.null }}",
	"{{ .ConfigData.list }}", "{{ .ConfigData.map }}", "{{ .ConfigData.map.k }}", "{{ .ConfigData.map.missing.x }}",
	"{{ .Labels }}", "{{ $ }}", "{{ . }}", "{{ index .Manifests \"repo\" }}", "{{ index .ConfigData \"missing\" }}",
	"{{ index .ConfigData.list 1 }}", "{{ index .ConfigData.list 9 }}", "{{ index .ConfigData \"map\" \"k\" }}",
	"{{ index .Manifests \"missing\" | default \"d\" | quote }}", "{{ .ConfigData.null | default \"z\" }}",
	"{{ quote .ConfigData.s .ConfigData.n }}", "{{ printf \"%s=%v\" .Namespace .ConfigData.n }}",
	"{{ printf \"%d\" .ConfigData.s }}", "{{ toString .ConfigData.f }}", "{{ upper .ConfigData.s }}",
	"{{ upper .ConfigData.n }}", "{{ .ConfigData.s | upper | quote }}", "{{ indent 2 .ConfigData.s }}",
	"{{ nindent 4 (toYaml .ConfigData.map) }}", "{{ stringify .ConfigData | indent 2 }}", "{{ fleetformLabels $ | nindent 2 }}",
	"{{ regexMatch \"^a\" .ConfigData.s }}", "{{ regexMatch \"(\" .ConfigData.s }}", "{{ fail \"stop\" }}",
	"{{ not .ConfigData.b }}", "{{ and .ConfigData.s .ConfigData.n }}", "{{ or .ConfigData.null .ConfigData.s }}",
	"{{ and .ConfigData.missing .ConfigData.x.y }}", "{{ or .ConfigData.b \"x\" }}", "{{ eq .ConfigData.s \"abc\" }}",
	"{{ eq .ConfigData.n 3 }}", "{{ eq 1 1 (fail \"late\") }}", "{{ eq .ConfigData.s \"x\" \"abc\" .ConfigData.n }}", "{{ eq .ConfigData.missing \"x\" }}", "{{ eq .ConfigData.map 1 }}",
	"{{ ne .ConfigData.n 2 }}", "{{ lt .ConfigData.n 5 }}", "{{ gt .ConfigData.f 1.5 }}", "{{ le .ConfigData.s \"b\" }}",
	"{{ ge .ConfigData.n .ConfigData.s }}", "{{ len .ConfigData.list }}", "{{ len .ConfigData.n }}", "{{ kindIs \"string\" .ConfigData.s }}",
	"{{ has \"b\" .ConfigData.list }}", "{{ first .ConfigData.list }}", "{{ list 1 \"a\" .ConfigData.s }}", "{{ $v := .ConfigData.s }}",
	"{{ $v }}", "{{ $v = .ConfigData.n }}", "{{ $w := index .ConfigData \"map\" }}{{ $w.k }}", "{{ $.Namespace }}",
	"{{ trunc 2 .ConfigData.s }}", "{{ substr 1 2 .ConfigData.s }}", "{{ default \"x\" }}", "{{ 3 }}", "{{ 1.5 }}",
	"{{ \"lit\" }}", "{{ true }}", "{{ 0x10 }}", "{{ 'a' }}", "{{ 1e3 }}", "{{ (quote .Namespace) }}",
	"{{- \"trimmed\" -}}", "{{/* a comment */}}", "text\n", "{{ indent \"x\" .Namespace }}", "{{ sha256sum .Namespace }}",
	"{{ toJson .ConfigData }}", "{{ .ConfigData.list | join \",\" }}", "{{ keys .ConfigData.map | sortAlpha }}",
	"{{ .ConfigData.s.x }}", "{{ .Namespace.x }}", "{{ tpl }}", "{{ print }}", "{{ println .ConfigData.n }}",
	"{{ if .ConfigData.b }}", "{{ if not .ConfigData.missing }}", "{{ if eq .ConfigData.s \"abc\" }}",
	"{{ with .ConfigData.map }}", "{{ with .ConfigData.null }}", "{{ with $x := .ConfigData.list }}",
	"{{ range .ConfigData.list }}", "{{ range $i, $e := .ConfigData.list }}", "{{ range $k, $v := .ConfigData.map }}",
	"{{ range .ConfigData.missing }}", "{{ range $e := .ConfigData.n }}", "{{ range $i := .ConfigData.list }}",
	"{{ range .Labels }}", "{{ range $k, $v := .Manifests }}",
}

// fastData are the config datas FuzzFastExecutor renders with.
var fastData = []map[string]any{
	{"s": "abc", "n": 3, "f": 2.5, "b": true, "null": nil, "list": []any{"a", "b", 3}, "map": map[string]any{"k": "v", "j": 1}},
	{"s": "", "n": 0, "f": 0.0, "b": false, "list": []any{}, "map": map[string]any{}},
	{"s": 7, "n": "x", "map": "flat", "list": map[string]any{"a": 1}},
	{},
}

// FuzzFastExecutor renders templates made of fastFragments (the fuzzer's bytes choose them,
// and where blocks end or get an else) with the fast executor and with text/template only:
// the files, or the errors, are the same, and a template that succeeds ran with the fast
// executor from start to end.
func FuzzFastExecutor(f *testing.F) {
	f.Add([]byte{0, 1, 2, 3, 4, 5}, uint8(0))
	f.Add([]byte{90, 3, 250, 91, 57, 58, 245, 0, 250}, uint8(1))
	f.Add([]byte{99, 60, 61, 250, 100, 58, 250}, uint8(0))
	f.Add([]byte{30, 31, 32, 33, 34, 35, 36, 37}, uint8(2))
	f.Fuzz(func(t *testing.T, program []byte, data uint8) {
		text := fastProgramText(program)
		config := fastData[int(data)%len(fastData)]
		snap := &controlplane.Snapshot{Templates: []*controlplane.Template{
			{Template: benchTemplate("r", v1alpha1.TemplateReconciler, text)},
			{Template: benchTemplate("n", v1alpha1.TemplateNamespace, "{{ .Namespace }}\n")},
			{Template: benchTemplate("c", v1alpha1.TemplateConfig, "")},
		}}
		fast, slow := render.NewEngine(snap), render.NewEngine(snap)
		if len(fast.Diagnostics) > 0 {
			return // does not parse
		}
		render.TextTemplateOnly(slow)
		got, gotErr := renderWith(t, fast, config)
		want, wantErr := renderWith(t, slow, config)
		if fmt.Sprint(gotErr) != fmt.Sprint(wantErr) {
			t.Fatalf("template %q: error %v, want %v", text, gotErr, wantErr)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("template %q: files\n%+v\nwant\n%+v", text, got, want)
		}
		if wantErr == nil && render.FastStops(fast) > 0 {
			t.Fatalf("template %q succeeds, but the fast executor gave it back to text/template", text)
		}
	})
}

func fastProgramText(program []byte) string {
	return blocks(&program, func(c int) string { return fastFragments[c%len(fastFragments)] })
}

func renderWith(t *testing.T, e *render.Engine, config map[string]any) (*render.Files, error) {
	t.Helper()
	ts, problems := e.TemplatesFor(v1alpha1.ClusterTypeSpec{Reconciler: "r", NamespaceService: "n", ConfigType: "c"})
	if len(problems) > 0 {
		t.Fatalf("templates: %v", problems)
	}
	manifests := map[string]string{"repo": "https://example.com/x.git", "branch": "main"}
	a := &schedule.Assignment{
		Workload: "app", DeploymentTarget: "app-x", ClusterType: "ct", Namespace: "dev-ct-app-x", Manifests: manifests,
		Target: &controlplane.DeploymentTarget{
			Name: "app-x", Environment: "dev", Workload: "app", Workspace: "team",
			Labels: map[string]string{v1alpha1.LabelWorkload: "app", v1alpha1.LabelWorkspace: "team"}, Manifests: manifests,
		},
	}
	files, err := e.RenderAssignment("dev", a, &compose.Config{Data: config}, ts)
	var te *render.TemplateError
	if errors.As(err, &te) {
		err = te.Err // the same template compiled twice: compare the messages
	}
	return files, err
}
