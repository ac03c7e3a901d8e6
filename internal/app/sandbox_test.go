package app_test

import (
	"maps"
	"os"
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
