package cli_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/fleetform/fleetform/internal/cli"
	"github.com/fleetform/fleetform/internal/controlplane"
	"github.com/fleetform/fleetform/internal/render"
	"github.com/fleetform/fleetform/internal/schedule"
	"github.com/fleetform/fleetform/internal/testutil/gittest"
)

// TestExampleControlPlane keeps examples/ (what the README quick start renders) working:
// every environment loads, schedules and renders without a single diagnostic, every
// deployment target and every cluster type takes part, and `fleetform validate` and
// `fleetform render` succeed on it.
func TestExampleControlPlane(t *testing.T) {
	root := gittest.ModuleRoot(t)
	dir := filepath.Join(root, "examples", "platform")
	config := filepath.Join(root, "examples", "fleetform.yaml")

	cp, err := controlplane.Open(t.Context(), dir, controlplane.Options{RepoMap: exampleRepoMap(t, config)})
	if err != nil {
		t.Fatal(err)
	}
	envs, diags, err := cp.Environments(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	noDiagnostics(t, "environments", diags)
	if len(envs) < 2 {
		t.Fatalf("the example declares %d environments, want at least 2", len(envs))
	}
	for _, env := range envs {
		t.Run(env.Name, func(t *testing.T) {
			if env.Object == nil {
				t.Errorf("environments/%s/ has no Environment document", env.Name)
			}
			snap, err := cp.Load(t.Context(), env.Name)
			if err != nil {
				t.Fatal(err)
			}
			noDiagnostics(t, "load", snap.Diagnostics)
			if snap.GitOpsRepo == nil {
				t.Error("no GitOpsRepo")
			}
			sched := schedule.Schedule(snap)
			noDiagnostics(t, "schedule", sched.Diagnostics)
			if len(sched.Assignments) == 0 {
				t.Fatal("no assignments")
			}
			targets, types := map[string]bool{}, map[string]bool{}
			for _, a := range sched.Assignments {
				targets[a.DeploymentTarget], types[a.ClusterType] = true, true
			}
			for _, dt := range sched.Targets {
				if !targets[dt.Name] {
					t.Errorf("deployment target %s is not scheduled anywhere", dt.Name)
				}
			}
			for _, ct := range sched.ClusterTypes {
				if !types[ct.Metadata.Name] {
					t.Errorf("cluster type %s gets no assignment", ct.Metadata.Name)
				}
			}
			out := render.Render(snap, sched, render.Options{})
			noDiagnostics(t, "render", out.Diagnostics)
			for _, a := range out.Failed() {
				t.Errorf("%s on %s failed: %v", a.DeploymentTarget, a.ClusterType, a.Err)
			}
			runCLI(t, "render", "--control-plane", dir, "--config", config, "--env", env.Name, "--out", t.TempDir())
		})
	}

	stdout := runCLI(t, "validate", "--control-plane", dir, "--config", config, "-o", "json")
	var v struct {
		Valid        bool `json:"valid"`
		Environments []struct {
			Environment string            `json:"environment"`
			Assignments int               `json:"assignments"`
			Rendered    int               `json:"rendered"`
			Errors      []json.RawMessage `json:"errors"`
		} `json:"environments"`
	}
	if err := json.Unmarshal([]byte(stdout), &v); err != nil {
		t.Fatalf("validate -o json: %v\n%s", err, stdout)
	}
	if !v.Valid || len(v.Environments) != len(envs) {
		t.Errorf("validate: valid=%v with %d environments, want valid with %d:\n%s", v.Valid, len(v.Environments), len(envs), stdout)
	}
	for _, e := range v.Environments {
		if e.Assignments == 0 || e.Rendered != e.Assignments || len(e.Errors) > 0 {
			t.Errorf("validate %s: %d assignments, %d rendered, %d errors", e.Environment, e.Assignments, e.Rendered, len(e.Errors))
		}
	}
}

// runCLI runs fleetform in-process and fails the test unless it exits 0 and prints
// nothing on stderr.
func runCLI(t *testing.T, args ...string) string {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := cli.Main(t.Context(), args, strings.NewReader(""), &stdout, &stderr)
	if code != cli.ExitOK || stderr.Len() > 0 {
		t.Errorf("fleetform %s: exit %d\nstderr:\n%s", strings.Join(args, " "), code, stderr.String())
	}
	return stdout.String()
}

func noDiagnostics(t *testing.T, stage string, ds []controlplane.Diagnostic) {
	t.Helper()
	for _, d := range ds {
		t.Errorf("%s: %s: %s", stage, d.Severity, d.Error())
	}
}

// exampleRepoMap reads the repoMap of examples/fleetform.yaml, resolved against the file's
// folder as the --config flag resolves it.
func exampleRepoMap(t *testing.T, config string) controlplane.RepoMap {
	t.Helper()
	data, err := os.ReadFile(config)
	if err != nil {
		t.Fatal(err)
	}
	var fc struct {
		RepoMap map[string]string `json:"repoMap"`
	}
	if err := yaml.UnmarshalStrict(data, &fc); err != nil {
		t.Fatalf("%s: %v", config, err)
	}
	m := controlplane.RepoMap{}
	for url, p := range fc.RepoMap {
		m[url] = filepath.Join(filepath.Dir(config), p)
	}
	if len(m) == 0 {
		t.Fatalf("%s maps no repository", config)
	}
	return m
}
