package app_test

import (
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fleetform/fleetform/internal/app"
	"github.com/fleetform/fleetform/internal/controlplane"
	"github.com/fleetform/fleetform/internal/testutil/gittest"
)

// TestMain makes this test binary the chart render worker when a sandbox runs it.
func TestMain(m *testing.M) {
	if os.Getenv(app.RenderWorkerEnv) == "1" {
		os.Exit(app.ServeRenderWorker(os.Stdin, os.Stdout))
	}
	os.Exit(m.Run())
}

// hostileTemplates are templates of the application team that would exhaust the machine.
var hostileTemplates = map[string]struct{ template, bound string }{
	"a loop without end":  {"{{ range until 100000 }}{{ range until 100000 }}{{ end }}{{ end }}", "rendering took longer than 2s"},
	"a huge list":         {"{{ range until 2000000000 }}x{{ end }}", "more than 1024 MiB"},
	"a string that grows": {"{{ $s := \"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\" }}{{ range until 40 }}{{ $s = print $s $s }}{{ end }}{{ $s }}", "more than 1024 MiB"},
}

// TestSandboxBoundsCharts: in the sandbox (a worker process bounded in time and memory) a
// chart whose template loops without end or allocates without end fails its target with
// the bound it hit; the same render without hostile templates gives the same files as in
// process.
func TestSandboxBoundsCharts(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	files, err := renderWebIn(t, nil, "", app.NewSandbox(exe))
	if err != nil {
		t.Fatal(err)
	}
	direct, err := renderWebIn(t, nil, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	for name, data := range direct {
		if string(files[name]) != string(data) {
			t.Errorf("%s differs in the sandbox:\n%s\nin process:\n%s", name, files[name], data)
		}
	}
	// Each bound alone: a long timeout for the memory cases, so that a slow machine cannot make
	// them hit the time bound instead; a short one for the loop, which holds little memory.
	byTime := &app.Sandbox{Exe: exe, Timeout: 2 * time.Second, Memory: 1 << 30}
	byMemory := &app.Sandbox{Exe: exe, Timeout: 10 * time.Minute, Memory: 1 << 30}
	defer byMemory.Close()
	for name, h := range hostileTemplates {
		bounded := byMemory
		if strings.Contains(h.bound, "longer than") {
			bounded = byTime
		}
		_, err := renderWebIn(t, map[string]string{"helm/templates/hostile.yaml": h.template}, "", bounded)
		if err == nil || !strings.Contains(err.Error(), h.bound) {
			t.Errorf("%s: %v, want %q", name, err, h.bound)
		}
	}
	if _, err := renderWebIn(t, nil, "", byTime); err != nil { // a new worker replaces the one stopped
		t.Errorf("after a stopped render: %v", err)
	}
	byTime.Close()
}

// renderWebIn renders the edge target of webChart changed by change ("" removes a file or
// folder), with the config values values, in the sandbox (nil: in process).
func renderWebIn(t *testing.T, change map[string]string, values string, sandbox *app.Sandbox) (map[string][]byte, error) {
	t.Helper()
	files := maps.Clone(webChart)
	for k, v := range change {
		if v == "" {
			for f := range files {
				if f == k || strings.HasPrefix(f, k+"/") {
					delete(files, f)
				}
			}
			continue
		}
		files[k] = v
	}
	src, cfg := gittest.New(t), gittest.New(t)
	src.Commit(t, "main", files)
	cfg.Commit(t, "main", map[string]string{"dev/edge/values.yaml": values})
	repos := controlplane.NewRepos(nil, nil, nil)
	tree, err := openRepo(t, repos, src.Dir).Tree("main")
	if err != nil {
		t.Fatal(err)
	}
	a, err := app.LoadSource(tree, "source")
	if err != nil {
		return nil, err
	}
	run := newRun(t, a, openRepo(t, repos, cfg.Dir), "dev", "main", nil, "1.0.0")
	run.In.Sandbox = sandbox
	f, err := run.Render(t.Context(), run.Targets[0])
	if err != nil {
		return nil, err
	}
	return f.Files, nil
}

// TestSandboxKustomize: a kustomize build runs in the sandbox too. It gives the same files
// as in process; the deprecated fields its kustomizations use come back as warnings with
// their files, and nothing is printed raw on this process's standard error; a chart its
// kustomization inflates is bounded like any other.
func TestSandboxKustomize(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	files := withFiles(kustomizeBase(), map[string]string{
		"fleetform-app.yaml": "kustomize: deploy/overlays/staging\n",
		"deploy/overlays/staging/kustomization.yaml": "bases: [../../base]\ncommonLabels: {tier: web}\n" +
			"patchesStrategicMerge:\n  - |-\n    apiVersion: apps/v1\n    kind: Deployment\n    metadata: {name: web}\n    spec: {replicas: 3}\n",
	})
	sandbox := app.NewSandbox(exe)
	defer sandbox.Close()
	var inSandbox map[string][]byte
	var warnings []string
	printed := stderrOf(t, func() { inSandbox, warnings = renderKustomizeIn(t, files, sandbox) })
	if printed != "" {
		t.Errorf("the build printed on standard error:\n%s", printed)
	}
	direct, _ := renderKustomizeIn(t, files, nil)
	if fmt.Sprint(inSandbox) != fmt.Sprint(direct) {
		t.Errorf("the sandbox's files differ from the build in process:\n%s\nin process:\n%s", inSandbox, direct)
	}
	if d := string(inSandbox["deployment-web.yaml"]); !strings.Contains(d, "replicas: 3") || !strings.Contains(d, "tier: web") {
		t.Errorf("deployment:\n%s", d)
	}
	for _, field := range []string{"bases", "commonLabels", "patchesStrategicMerge"} {
		want := "deploy/overlays/staging/kustomization.yaml: '" + field + "' is deprecated."
		if !slices.ContainsFunc(warnings, func(w string) bool { return strings.HasPrefix(w, want) }) {
			t.Errorf("warnings %q lack %q", warnings, want)
		}
	}

	looping := withFiles(helmChartSource("kustomize: deploy/base\n", "  - name: hello\n    releaseName: hi\n"), map[string]string{
		"deploy/base/charts/hello/templates/loop.yaml": hostileTemplates["a loop without end"].template,
	})
	src, cfg := gittest.New(t), gittest.New(t)
	src.Commit(t, "main", looping)
	cfg.Commit(t, "main", map[string]string{"dev/edge/values.yaml": "a: b\n"})
	repos := controlplane.NewRepos(nil, nil, nil)
	run := newRun(t, loadApp(t, repos, src.Dir), openRepo(t, repos, cfg.Dir), "dev", "main", nil, "1.0.0")
	run.In.Sandbox = &app.Sandbox{Exe: exe, Timeout: 2 * time.Second, Memory: 1 << 30}
	defer run.In.Sandbox.Close()
	if _, err := run.Render(t.Context(), run.Targets[0]); err == nil || !strings.Contains(err.Error(), "kustomize deploy/base: rendering took longer than 2s") {
		t.Errorf("a kustomization inflating a looping chart: %v", err)
	}
}

// renderKustomizeIn renders the edge target of the kustomize source files in the sandbox
// (nil: in process); it returns the files and the app's warnings.
func renderKustomizeIn(t *testing.T, files map[string]string, sandbox *app.Sandbox) (map[string][]byte, []string) {
	t.Helper()
	src, cfg := gittest.New(t), gittest.New(t)
	src.Commit(t, "main", files)
	cfg.Commit(t, "main", map[string]string{"dev/edge/values.yaml": "a: b\n"})
	repos := controlplane.NewRepos(nil, nil, nil)
	a := loadApp(t, repos, src.Dir)
	run := newRun(t, a, openRepo(t, repos, cfg.Dir), "dev", "main", nil, "1.0.0")
	run.In.Sandbox = sandbox
	f, err := run.Render(t.Context(), run.Targets[0])
	if err != nil {
		t.Fatal(err)
	}
	return f.Files, a.Warnings()
}

// stderrOf is what fn writes on this process's standard error.
func stderrOf(t *testing.T, fn func()) string {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	saved := os.Stderr
	t.Cleanup(func() { os.Stderr = saved }) // also when fn fails the test
	os.Stderr = w
	out := make(chan string, 1)
	go func() {
		b, _ := io.ReadAll(r)
		out <- string(b)
	}()
	fn()
	os.Stderr = saved
	_ = w.Close()
	return <-out
}

// TestSandboxKeepsEmptyValues: the worker renders the values the render in process renders:
// an empty list or mapping of the config values (over a chart default, nested, in a list)
// stays empty, it does not become null.
func TestSandboxKeepsEmptyValues(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	sandbox := app.NewSandbox(exe)
	defer sandbox.Close()
	change := map[string]string{
		"helm/values.yaml": "cache:\n  enabled: false\nsession:\n  port: 7000\ncors:\n  allowedOrigins: [https://example.com]\n  headers: {X-A: b}\n",
		"helm/templates/values.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: values\ndata:\n" +
			"  cors: {{ toJson .Values.cors | quote }}\n  lists: {{ toJson .Values.lists | quote }}\n  empty: {{ toJson .Values.empty | quote }}\n",
	}
	values := "cors:\n  allowedOrigins: []\n  headers: {}\nlists: [[], {}, {a: []}, 1]\nempty: {a: {}, b: []}\n"
	direct, err := renderWebIn(t, change, values, nil)
	if err != nil {
		t.Fatal(err)
	}
	if d := string(direct["configmap-values.yaml"]); !strings.Contains(d, `cors: "{\"allowedOrigins\":[],\"headers\":{\"X-A\":\"b\"}}"`) ||
		!strings.Contains(d, `lists: "[[],{},{\"a\":[]},1]"`) || !strings.Contains(d, `empty: "{\"a\":{},\"b\":[]}"`) {
		t.Fatalf("in process:\n%s", d)
	}
	inSandbox, err := renderWebIn(t, change, values, sandbox)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(inSandbox["configmap-values.yaml"]), string(direct["configmap-values.yaml"]); got != want {
		t.Errorf("the worker rendered other values:\n%s\nin process:\n%s", got, want)
	}
}
