package render_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fleetform/fleetform/api/v1alpha1"
	"github.com/fleetform/fleetform/internal/controlplane"
	"github.com/fleetform/fleetform/internal/render"
	"github.com/fleetform/fleetform/internal/schedule"
	"github.com/fleetform/fleetform/internal/testutil/golden"
)

// missingConfig is the config of the missing-key tests: "missing" is never a key.
var missingConfig = map[string]any{
	"a":       "A",
	"b":       "B",
	"literal": "<no value>",
	"nested":  map[string]any{"x": "X", "null": nil},
	"list":    []any{"one", nil},
}

var missingManifests = map[string]string{"repo": "https://example.com/x.git", "branch": "main"}

// renderText renders one manifest (as the reconciler template) for the assignment of
// renderOne, with the given limits.
func renderText(t *testing.T, lim render.Limits, text string, config map[string]any) (string, error) {
	t.Helper()
	snap := &controlplane.Snapshot{Templates: []*controlplane.Template{
		{Template: benchTemplate("r", v1alpha1.TemplateReconciler, text)},
		{Template: benchTemplate("n", v1alpha1.TemplateNamespace, "ns")},
		{Template: benchTemplate("c", v1alpha1.TemplateConfig, "")},
	}}
	e := render.NewEngine(snap)
	if len(e.Diagnostics) > 0 {
		t.Fatalf("parse: %v", e.Diagnostics)
	}
	e.Limits = lim
	files, err := renderOne(t, e, v1alpha1.ClusterTypeSpec{Reconciler: "r", NamespaceService: "n", ConfigType: "c"}, missingManifests, config)
	if err != nil {
		return "", err
	}
	return string(files.Reconciler), nil
}

// TestAbsentKeysInGuards checks that absent keys behave as in Kalypso (text/template's
// default missingkey option) everywhere but in printing: false in if, with, and, or, not;
// nil to functions.
func TestAbsentKeysInGuards(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, text, want string }{
		{"if", `{{ if .ConfigData.missing }}yes{{ else }}no{{ end }}`, "no"},
		{"if on a present key", `{{ if .ConfigData.a }}yes{{ else }}no{{ end }}`, "yes"},
		{"if below an absent key", `{{ if .ConfigData.missing.sub }}yes{{ else }}no{{ end }}`, "no"},
		{"if on a null value", `{{ if .ConfigData.nested.null }}yes{{ else }}no{{ end }}`, "no"},
		{"if on an absent manifests key", `{{ if .Manifests.missing }}yes{{ else }}no{{ end }}`, "no"},
		{"if on an absent label", `{{ if .Labels.missing }}yes{{ else }}no{{ end }}`, "no"},
		{"if with $", `{{ range list 1 }}{{ if $.ConfigData.missing }}yes{{ else }}no{{ end }}{{ end }}`, "no"},
		{"with", `{{ with .ConfigData.missing }}{{ . }}{{ else }}none{{ end }}`, "none"},
		{"with on a present key", `{{ with .ConfigData.a }}{{ . }}{{ end }}`, "A"},
		{"else with", `{{ with .ConfigData.missing }}1{{ else with .ConfigData.b }}{{ . }}{{ end }}`, "B"},
		{"and", `{{ if and .ConfigData.a .ConfigData.missing }}yes{{ else }}no{{ end }}`, "no"},
		{"and of present keys", `{{ if and .ConfigData.a .ConfigData.b }}yes{{ else }}no{{ end }}`, "yes"},
		{"or", `{{ if or .ConfigData.missing .ConfigData.a }}yes{{ else }}no{{ end }}`, "yes"},
		{"or printed", `{{ or .ConfigData.missing .ConfigData.a }}`, "A"},
		{"not", `{{ if not .ConfigData.missing }}yes{{ end }}`, "yes"},
		{"default", `{{ .ConfigData.missing | default "x" }}`, "x"},
		{"default below an absent key", `{{ .ConfigData.missing.sub | default "x" }}`, "x"},
		{"default of manifests", `{{ .Manifests.missing | default "main" }}`, "main"},
		{"default as an argument", `{{ default "x" .ConfigData.missing }}`, "x"},
		{"hasKey", `{{ hasKey .ConfigData "missing" }}`, "false"},
		{"empty", `{{ empty .ConfigData.missing }}`, "true"},
		{"coalesce", `{{ coalesce .ConfigData.missing .ConfigData.b }}`, "B"},
		{"ternary", `{{ ternary "set" "unset" (not (empty .ConfigData.missing)) }}`, "unset"},
		{"eq", `{{ eq .ConfigData.missing "x" }}`, "false"},
		{"ne", `{{ ne .ConfigData.missing "x" }}`, "true"},
		{"eq in if", `{{ if eq .Manifests.missing "kustomize" }}k{{ else }}other{{ end }}`, "other"},
		{"range over an absent key", `{{ range .ConfigData.missing }}x{{ else }}empty{{ end }}`, "empty"},
		{"quote gets nil", `[{{ .ConfigData.missing | quote }}]`, "[]"},
		{"toYaml gets nil", `{{ toYaml .ConfigData.missing }}`, "null"},
		{"assigned, then guarded", `{{ $x := .ConfigData.missing }}{{ if $x }}yes{{ else }}no{{ end }}`, "no"},
		{"the text <no value> itself", `{{ .ConfigData.literal }}`, "<no value>"},
		{"the text <no value> through $", `{{ $.ConfigData.literal }}`, "<no value>"},
		{"the text <no value> from a function", `{{ .ConfigData.literal | print }}`, "<no value>"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := renderText(t, render.Limits{}, tc.text, missingConfig)
			if err != nil {
				t.Fatalf("%s: %v", tc.text, err)
			}
			if got := strings.TrimSuffix(got, "\n"); got != tc.want {
				t.Errorf("%s = %q, want %q", tc.text, got, tc.want)
			}
		})
	}
}

// TestPrintingAbsentValuesFails checks that an action that would print an absent or null
// value (text/template's "<no value>") fails with the manifest, line and column, the
// expression, and which key is absent or null when that is known.
func TestPrintingAbsentValuesFails(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, text, want string }{
		{"absent config key", "x: {{ .ConfigData.missing }}",
			`template: r[0]:1:17: executing "r[0]" at <.ConfigData.missing>: map has no entry for key "missing"`},
		{"absent manifests key", "line 1\nurl: {{ .Manifests.missing }}",
			`template: r[0]:2:18: executing "r[0]" at <.Manifests.missing>: map has no entry for key "missing"`},
		{"absent label", "{{ .Labels.missing }}",
			`at <.Labels.missing>: map has no entry for key "missing"`},
		{"below an absent key", "{{ .ConfigData.missing.sub }}",
			`template: r[0]:1:14: executing "r[0]" at <.ConfigData.missing.sub>: map has no entry for key "missing"`},
		{"null value", "{{ .ConfigData.nested.null }}",
			`at <.ConfigData.nested.null>: the value of .ConfigData.nested.null is null`},
		{"through $ in a range", "{{ range list 1 }}{{ $.ConfigData.missing }}{{ end }}",
			`template: r[0]:1:22: executing "r[0]" at <$.ConfigData.missing>: map has no entry for key "missing"`},
		{"index", `{{ index .ConfigData "missing" }}`,
			`template: r[0]:1:3: executing "r[0]" at <index .ConfigData "missing">: no value (absent or null)`},
		{"variable", "{{ $x := .ConfigData.missing }}{{ $x }}",
			`template: r[0]:1:34: executing "r[0]" at <$x>: no value (absent or null)`},
		{"null list element", "{{ range .ConfigData.list }}{{ . }},{{ end }}",
			`template: r[0]:1:31: executing "r[0]" at <.>: no value`},
		{"or of absent keys", "{{ or .ConfigData.missing .ConfigData.other }}",
			`at <or .ConfigData.missing .ConfigData.other>: no value`},
		{"in a defined template", `{{ define "d" }}{{ .missing }}{{ end }}{{ template "d" .ConfigData }}`,
			`template: r[0]:1:19: executing "d" at <.missing>: no value`},
		{"in a template that changes the data", `{{ $_ := set .ConfigData "k" "v" }}{{ .ConfigData.missing }}`,
			`template: r[0]:1:49: executing "r[0]" at <.ConfigData.missing>: map has no entry for key "missing"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			out, err := renderText(t, render.Limits{}, tc.text, missingConfig)
			if err == nil {
				t.Fatalf("%s rendered %q, want an error", tc.text, out)
			}
			var te *render.TemplateError
			if !errors.As(err, &te) {
				t.Fatalf("err = %v, want a *render.TemplateError", err)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v\nwant it to contain %q", err, tc.want)
			}
			if !strings.Contains(err.Error(), "an absent or null value cannot be printed") {
				t.Errorf("err = %v\nwant it to say that absent values cannot be printed", err)
			}
		})
	}
}

// TestAbsentKeysErrors checks the errors that have nothing to do with printing: a function
// that needs a string gets nil (as in Kalypso), and a misspelled field of the data.
func TestAbsentKeysErrors(t *testing.T) {
	t.Parallel()
	for text, want := range map[string]string{
		"{{ .ConfigData.missing | upper }}": "invalid value; expected string",
		"{{ if .Namepsace }}x{{ end }}":     "can't evaluate field Namepsace in type *render.Data",
	} {
		_, err := renderText(t, render.Limits{}, text, missingConfig)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: err = %v, want it to contain %q", text, err, want)
		}
	}
}

// writeTree writes files (slash-separated path -> content) under dir.
func writeTree(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// loadDev opens the control plane in dir and schedules its dev environment.
func loadDev(t *testing.T, dir string) (*controlplane.Snapshot, *schedule.Result) {
	t.Helper()
	cp, err := controlplane.Open(t.Context(), dir, controlplane.Options{})
	if err != nil {
		t.Fatal(err)
	}
	snap, err := cp.Load(t.Context(), "dev")
	if err != nil {
		t.Fatal(err)
	}
	failOnErrors(t, snap.Diagnostics)
	sched := schedule.Schedule(snap)
	failOnErrors(t, sched.Diagnostics)
	return snap, sched
}

// TestBootstrapGolden renders a control plane shaped like Kalypso's bootstrap one, whose
// namespace template guards imagePullSecrets with {{ if .ConfigData.imagePullSecrets }},
// for a cluster type with the key and one without.
func TestBootstrapGolden(t *testing.T) {
	snap, sched := loadDev(t, filepath.Join("testdata", "bootstrap", "controlplane"))
	out := render.Render(snap, sched, render.Options{})
	failOnErrors(t, out.Diagnostics)
	for _, a := range out.Failed() {
		t.Errorf("%s on %s failed: %v", a.DeploymentTarget, a.ClusterType, a.Err)
	}
	tree := out.Tree()
	golden.Tree(t, filepath.Join("testdata", "bootstrap", "want"), tree, *update)
	if ns := string(tree["private/hello-hello-dev/namespace.yaml"]); !strings.Contains(ns, "imagePullSecrets:\n  - name: registry-auth\n") {
		t.Errorf("private/hello-hello-dev/namespace.yaml has no imagePullSecrets:\n%s", ns)
	}
	if ns := string(tree["public/hello-hello-dev/namespace.yaml"]); strings.Contains(ns, "imagePullSecrets") {
		t.Errorf("public/hello-hello-dev/namespace.yaml has imagePullSecrets:\n%s", ns)
	}
}

// TestPrintingAbsentKeyDiagnostic checks the diagnostic of a Template that prints an absent
// key: at the line of the Template's file, for the assignments without the key only.
func TestPrintingAbsentKeyDiagnostic(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join("testdata", "bootstrap", "controlplane")
	files := map[string]string{}
	for _, name := range []string{"workloads/hello.yaml", "templates/reconciler.yaml", "templates/config.yaml",
		"environments/dev/environment.yaml", "environments/dev/cluster-types.yaml", "environments/dev/config.yaml"} {
		data, err := os.ReadFile(filepath.Join(src, filepath.FromSlash(name)))
		if err != nil {
			t.Fatal(err)
		}
		files[name] = string(data)
	}
	// The namespace template prints the key without a guard (line 11 of the file).
	files["templates/namespace.yaml"] = `apiVersion: scheduler.kalypso.io/v1alpha1
kind: Template
metadata:
  name: namespace
spec:
  type: namespace
  manifests:
    - |
      apiVersion: v1
      kind: ServiceAccount
      imagePullSecrets: [{name: {{ .ConfigData.imagePullSecrets }}}]
`
	writeTree(t, dir, files)
	snap, sched := loadDev(t, dir)
	out := render.Render(snap, sched, render.Options{})
	failed := out.Failed()
	if len(failed) != 1 || failed[0].ClusterType != "public" {
		t.Fatalf("failed assignments: %v, want only hello-hello-dev on public", failed)
	}
	if len(out.Diagnostics) != 1 {
		t.Fatalf("diagnostics = %v, want 1", out.Diagnostics)
	}
	d := out.Diagnostics[0]
	if d.File != "templates/namespace.yaml" || d.Line != 11 || d.Kind != "Template" || d.Name != "namespace" {
		t.Errorf("diagnostic at %s:%d %s/%s, want templates/namespace.yaml:11 Template/namespace", d.File, d.Line, d.Kind, d.Name)
	}
	want := `rendering hello-hello-dev on public: template: namespace[0]:3:40: executing "namespace[0]" at <.ConfigData.imagePullSecrets>: map has no entry for key "imagePullSecrets"`
	if !strings.HasPrefix(d.Message, want) {
		t.Errorf("message = %q\nwant it to start with %q", d.Message, want)
	}
	if _, ok := out.Tree()["private/hello-hello-dev/namespace.yaml"]; !ok {
		t.Error("the assignment with the key was not rendered")
	}
}

// TestStopEndsTheRender: with Options.Stop closed, no assignment is rendered and the output
// says it is incomplete; open, everything is rendered.
func TestStopEndsTheRender(t *testing.T) {
	snap, sched := loadDev(t, filepath.Join("testdata", "bootstrap", "controlplane"))
	stop := make(chan struct{})
	if out := render.Render(snap, sched, render.Options{Stop: stop}); out.Stopped || len(out.Failed()) > 0 {
		t.Fatalf("open stop: stopped %v, %d failed", out.Stopped, len(out.Failed()))
	}
	close(stop)
	out := render.Render(snap, sched, render.Options{Stop: stop})
	if !out.Stopped {
		t.Error("the output of a stopped render is not marked Stopped")
	}
	for _, a := range out.Assignments {
		if a.Files != nil {
			t.Errorf("%s/%s rendered after the stop", a.ClusterType, a.DeploymentTarget)
		}
	}
}
