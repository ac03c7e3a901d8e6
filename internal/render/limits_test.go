package render_test

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fleetform/fleetform/internal/render"
)

// expired is a deadline every check finds passed: a template that loops fails at its
// first deadline check, whatever the machine's speed.
var expired = render.Limits{Timeout: time.Nanosecond}

// limitCase is a template that must stop at a limit, with what the error must say.
type limitCase struct {
	name, text string
	lim        render.Limits
	want       []string
}

// hostileCases exhaust memory or time without the limits: they run in a child process
// whose memory and CPU time are capped (TestHostileTemplates).
var hostileCases = []limitCase{
	{"untilStep overflowing the length", `{{ range untilStep -9223372036854775807 9223372036854775807 1 }}{{ end }}`, render.Limits{},
		[]string{"r[0]:1:9", "error calling untilStep", "18446744073709551614 elements, over the 100000 limit", "(MaxListLen)"}},
	{"untilStep overflowing the counter", `{{ untilStep 9223372036854775000 9223372036854775807 1000 | len }}`, render.Limits{}, nil},
	{"untilStep with a huge negative step", `{{ untilStep 0 -9223372036854775808 -3 }}`, render.Limits{},
		[]string{"error calling untilStep", "(MaxListLen)"}},
	{"a string doubled in a loop", `{{ $s := "x" }}{{ range until 100 }}{{ $s = print $s $s }}{{ end }}`, render.Limits{},
		[]string{"r[0]:1:44", "error calling print", "over the 4 MiB limit on one value (MaxValueBytes)"}},
	{"nested loops without a function", `{{ range 100000 }}{{ range 100000 }}{{ end }}{{ end }}`, expired,
		[]string{"template: r[0]:1:27: rendering the assignment took longer than its 1ns limit (Timeout)"}},
	{"a loop of a billion iterations", `{{ range 1000000000 }}{{ end }}`, expired,
		[]string{"template: r[0]:1:9: rendering the assignment took longer than its 1ns limit (Timeout)"}},
	{"exponential template recursion", `{{ define "t" }}{{ if lt (len .) 60 }}{{ template "t" (append . 1) }}{{ template "t" (append . 1) }}{{ end }}{{ end }}{{ template "t" list }}`, expired,
		[]string{"(Timeout)"}},
	{"nindent of a huge width", `{{ nindent 1000000000 (repeat 100000 "\n") }}`, render.Limits{},
		[]string{"error calling nindent", "(MaxValueBytes)"}},
	{"replace with a long replacement", `{{ replace "a" (repeat 1000000 "b") (repeat 1000000 "a") }}`, render.Limits{},
		[]string{"error calling replace", "(MaxValueBytes)"}},
	{"regexReplaceAll expanding groups", `{{ regexReplaceAll "(a)" (repeat 1000000 "a") (repeat 1000 "$1") }}`, render.Limits{},
		[]string{"error calling regexReplaceAll", "(MaxValueBytes)"}},
	{"join of a list sharing one big string", `{{ $l := list (repeat 1000000 "x") }}{{ range until 12 }}{{ $l = concat $l $l }}{{ end }}{{ join "," $l }}`, render.Limits{},
		[]string{"error calling join", "(MaxValueBytes)"}},
	{"toJson of a dict sharing one list", `{{ $d := dict }}{{ $l := until 100000 }}{{ range until 1000 }}{{ $_ := set $d (toString .) $l }}{{ end }}{{ toJson $d }}`, render.Limits{},
		[]string{"error calling toJson", "(MaxValueBytes)"}},
	{"printing a dict sharing one list", `{{ $d := dict }}{{ $l := until 100000 }}{{ range until 1000 }}{{ $_ := set $d (toString .) $l }}{{ end }}{{ $d }}`, render.Limits{},
		[]string{"template: r[0]:1:108: output larger than the 4 MiB limit per manifest (MaxManifestBytes)"}},
	{"toYaml of a dict that contains itself", `{{ $d := dict }}{{ $_ := set $d "self" $d }}{{ toYaml $d }}`, render.Limits{},
		[]string{"error calling toYaml", "nested deeper than 1000 levels, or containing itself (MaxValueDepth)"}},
	{"printing a dict that contains itself", `{{ $d := dict }}{{ $_ := set $d "self" $d }}{{ $d }}`, render.Limits{},
		[]string{"template: r[0]:1:47: value nested deeper than 1000 levels, or containing itself (MaxValueDepth)"}},
	{"deepCopy of a dict that contains itself", `{{ $d := dict }}{{ $_ := set $d "self" $d }}{{ $c := deepCopy $d }}`, render.Limits{},
		[]string{"error calling deepCopy", "(MaxValueDepth)"}},
	{"merge of a dict that contains itself", `{{ $d := dict "a" (dict) }}{{ $_ := set $d "self" $d }}{{ $m := merge (dict) $d }}`, render.Limits{},
		[]string{"error calling merge", "(MaxValueDepth)"}},
	{"distinct big strings kept in a dict", `{{ $d := dict }}{{ $s := repeat 1000000 "x" }}{{ range until 100000 }}{{ $_ := set $d (toString .) (print $s .) }}{{ end }}`, render.Limits{},
		[]string{"error calling print", "template functions allocated more than the 64 MiB limit per assignment (MaxAllocBytes)"}},
	{"uniq of many distinct lists", `{{ $u := uniq (chunk 1 (until 100000)) }}`, expired,
		[]string{"error calling uniq", "(Timeout)"}},
	{"split into a huge dict", `{{ $d := split "," (repeat 1000000 ",") }}`, render.Limits{},
		[]string{"error calling split", "1000001 elements, over the 100000 limit", "(MaxListLen)"}},
}

// TestHostileTemplates renders templates that, unbounded, exhaust the memory or the time
// of the run, and checks that each fails with the limit it hits, located at its action.
// The cases run in a child process of the test binary with capped memory and CPU time,
// so that a regression crashes the child and fails this test, not the machine.
func TestHostileTemplates(t *testing.T) {
	const childEnv = "FLEETFORM_RENDER_HOSTILE_CHILD"
	if canLimitProcess && os.Getenv(childEnv) == "" {
		cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^TestHostileTemplates$", "-test.v")
		cmd.Env = append(os.Environ(), childEnv+"=1")
		out, err := cmd.CombinedOutput()
		if err != nil {
			if len(out) > 16<<10 {
				out = append([]byte("...\n"), out[len(out)-16<<10:]...)
			}
			t.Fatalf("the hostile templates failed, or crashed their capped process (%v):\n%s", err, out)
		}
		return
	}
	if err := limitProcess(2<<30, 120); err != nil {
		t.Fatal(err)
	}
	runLimitCases(t, withoutClock(hostileCases))
}

// withoutClock gives the cases that must stop at another limit than Timeout a timeout
// they cannot reach: a busy machine slows them down, and they must still stop where they
// should, not at the clock (the process's CPU time is capped all the same).
func withoutClock(cases []limitCase) []limitCase {
	out := make([]limitCase, 0, len(cases))
	for _, tc := range cases {
		if tc.lim.Timeout == 0 && !strings.Contains(strings.Join(tc.want, " "), "(Timeout)") {
			tc.lim.Timeout = time.Hour
		}
		out = append(out, tc)
	}
	return out
}

// TestTemplateLimits checks the bounds that cost little even without limits.
func TestTemplateLimits(t *testing.T) {
	t.Parallel()
	small := render.Limits{MaxValueBytes: 1 << 20, MaxListLen: 1000, MaxAllocBytes: 8 << 20, MaxManifestBytes: 1 << 20}
	runLimitCases(t, []limitCase{
		{"until counts down below zero, as sprig", `{{ until -3 }}`, render.Limits{}, nil},
		{"untilStep down", `{{ untilStep 5 0 -2 }}`, render.Limits{}, nil},
		{"untilStep with step 0", `{{ untilStep 0 10 0 }}`, render.Limits{}, nil},
		{"until past the list limit", `{{ until 1001 }}`, small,
			[]string{"r[0]:1:3", "error calling until", "1001 elements, over the 1000 limit on a list or dict (MaxListLen)"}},
		{"repeat", `{{ repeat 1048577 "x" }}`, small,
			[]string{"error calling repeat", "over the 1 MiB limit on one value (MaxValueBytes)"}},
		{"repeat of an overflowing size", `{{ repeat 4611686018427387904 "ab" }}`, small, []string{"(MaxValueBytes)"}},
		{"indent", `{{ indent 600000 "a\nb" }}`, small, []string{"error calling indent", "(MaxValueBytes)"}},
		{"printf padding", `{{ printf "%999999d%999999d" 1 2 }}`, small, []string{"error calling printf", "(MaxValueBytes)"}},
		{"wrapWith", `{{ wrapWith 1 (repeat 100 "-") (repeat 20000 "a ") }}`, small, []string{"error calling wrapWith", "(MaxValueBytes)"}},
		{"splitList", `{{ splitList "," (repeat 1000 ",") }}`, small, []string{"error calling splitList", "(MaxListLen)"}},
		{"regexSplit", `{{ regexSplit "," (repeat 1000 ",") -1 }}`, small, []string{"error calling regexSplit", "(MaxListLen)"}},
		{"regexFindAll", `{{ regexFindAll "a" (repeat 1001 "a") -1 }}`, small, []string{"error calling regexFindAll", "(MaxListLen)"}},
		{"append in a loop", `{{ $l := list }}{{ range until 1000 }}{{ $l = append $l . }}{{ end }}`, render.Limits{MaxAllocBytes: 4 << 20},
			[]string{"error calling append", "more than the 4 MiB limit per assignment (MaxAllocBytes)"}},
		{"set in a loop", `{{ $d := dict }}{{ range until 1000 }}{{ $_ := set $d (toString .) . }}{{ end }}{{ $_ := set $d "x" 1 }}`, small,
			[]string{"error calling set", "1001 elements, over the 1000 limit", "(MaxListLen)"}},
		{"output", `{{ range until 1000 }}{{ repeat 2000 "x" }}{{ end }}`, small,
			[]string{"template: r[0]: output larger than the 1 MiB limit per manifest (MaxManifestBytes)"}},
		{"template recursion", `{{ define "t" }}{{ template "t" . }}{{ end }}{{ template "t" . }}`, render.Limits{},
			[]string{"template: r[0]:1:16: template calls nested deeper than 1000 (MaxTemplateDepth)"}},
		{"a loop without output", `{{ range until 1000 }}{{ end }}`, expired,
			[]string{"template: r[0]:1:9: rendering the assignment took longer than its 1ns limit (Timeout)"}},
		{"a loop of function calls", `{{ range until 1000 }}{{ $x := upper "a" }}{{ end }}`, expired, []string{"(Timeout)"}},
	})
}

func runLimitCases(t *testing.T, cases []limitCase) {
	t.Helper()
	want := map[string]string{
		"until counts down below zero, as sprig": "[0 -1 -2]",
		"untilStep down":                         "[5 3 1]",
		"untilStep with step 0":                  "[]",
		"untilStep overflowing the counter":      "1",
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out, err := renderText(t, tc.lim, tc.text, missingConfig)
			if tc.want == nil {
				if err != nil {
					t.Fatalf("%s: %v", tc.text, err)
				}
				if got := strings.TrimSpace(out); got != want[tc.name] {
					t.Errorf("%s = %q, want %q", tc.text, got, want[tc.name])
				}
				return
			}
			if err == nil {
				if len(out) > 200 {
					out = out[:200] + "..."
				}
				t.Fatalf("%s rendered %q, want an error", tc.text, out)
			}
			var te *render.TemplateError
			if !errors.As(err, &te) {
				t.Fatalf("err = %v, want a *render.TemplateError", err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("err = %v\nwant it to contain %q", err, w)
				}
			}
			var le *render.LimitError
			if !errors.As(err, &le) {
				t.Errorf("err = %v, want a *render.LimitError", err)
			}
		})
	}
}

// TestLimitFailsOnlyItsAssignments renders two cluster types, one with a template that
// hits a limit (a small one, given in Options): only its assignment fails, at the line of
// the template's file, and the other renders.
func TestLimitFailsOnlyItsAssignments(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join("testdata", "bootstrap", "controlplane")
	files := map[string]string{}
	for _, name := range []string{"workloads/hello.yaml", "templates/reconciler.yaml", "templates/config.yaml",
		"templates/namespace.yaml", "environments/dev/environment.yaml", "environments/dev/config.yaml"} {
		data, err := os.ReadFile(filepath.Join(src, filepath.FromSlash(name)))
		if err != nil {
			t.Fatal(err)
		}
		files[name] = string(data)
	}
	files["templates/hostile.yaml"] = `apiVersion: scheduler.kalypso.io/v1alpha1
kind: Template
metadata:
  name: hostile
spec:
  type: namespace
  manifests:
    - |
      kind: List
      items: {{ range until 11 }}x{{ end }}
`
	files["environments/dev/cluster-types.yaml"] = `apiVersion: scheduler.kalypso.io/v1alpha1
kind: ClusterType
metadata:
  name: healthy
spec: {reconciler: reconciler, namespaceService: namespace, configType: config}
---
apiVersion: scheduler.kalypso.io/v1alpha1
kind: ClusterType
metadata:
  name: broken
spec: {reconciler: reconciler, namespaceService: hostile, configType: config}
`
	writeTree(t, dir, files)
	snap, sched := loadDev(t, dir)
	out := render.Render(snap, sched, render.Options{Limits: render.Limits{MaxListLen: 10}})
	if failed := out.Failed(); len(failed) != 1 || failed[0].ClusterType != "broken" {
		t.Fatalf("failed assignments: %v, want only the one on broken", failed)
	}
	if _, ok := out.Tree()["healthy/hello-hello-dev/namespace.yaml"]; !ok {
		t.Error("the assignment on the healthy cluster type was not rendered")
	}
	if len(out.Diagnostics) != 1 {
		t.Fatalf("diagnostics = %v, want 1", out.Diagnostics)
	}
	d := out.Diagnostics[0]
	if d.File != "templates/hostile.yaml" || d.Line != 10 || d.Name != "hostile" {
		t.Errorf("diagnostic at %s:%d %s, want templates/hostile.yaml:10 hostile", d.File, d.Line, d.Name)
	}
	for _, want := range []string{"rendering hello-hello-dev on broken", "error calling until", "11 elements, over the 10 limit on a list or dict (MaxListLen)"} {
		if !strings.Contains(d.Message, want) {
			t.Errorf("message = %q\nwant it to contain %q", d.Message, want)
		}
	}
}
