package fleetgen_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/fleetform/fleetform/internal/controlplane"
	"github.com/fleetform/fleetform/internal/dev/fleetgen"
	"github.com/fleetform/fleetform/internal/render"
	"github.com/fleetform/fleetform/internal/schedule"
)

var small = fleetgen.Spec{Targets: 20, ClusterTypes: 5, Seed: 7}

func TestGenerateIsDeterministic(t *testing.T) {
	for _, spec := range []fleetgen.Spec{small, {Targets: 101, ClusterTypes: 13, Environment: "stage", Seed: -3}, {}} {
		a, b := fleetgen.Generate(spec), fleetgen.Generate(spec)
		if len(a) != len(b) {
			t.Fatalf("%+v: %d files, then %d", spec, len(a), len(b))
		}
		for p, content := range a {
			if !bytes.Equal(content, b[p]) {
				t.Errorf("%+v: %s differs between two runs", spec, p)
			}
		}
	}
	other := small
	other.Seed++
	if equalTrees(fleetgen.Generate(small), fleetgen.Generate(other)) {
		t.Error("seeds 7 and 8 generate the same fleet")
	}
}

func equalTrees(a, b map[string][]byte) bool {
	if len(a) != len(b) {
		return false
	}
	for p, content := range a {
		if !bytes.Equal(content, b[p]) {
			return false
		}
	}
	return true
}

func TestDefaults(t *testing.T) {
	got := fleetgen.Describe(fleetgen.Spec{})
	want := fleetgen.Summary{
		Environment: "dev", Workspaces: 5, Workloads: 100, DeploymentTargets: 1000, ClusterTypes: 100,
		BuiltinTemplated: 50, Templates: 4, ConfigSchemas: 1, SchedulingPolicies: 7, Assignments: 100_000,
	}
	if got.Regions < 8 || got.Regions > 10 {
		t.Errorf("regions = %d, want about 10", got.Regions)
	}
	if wantCMs := 1 + got.Regions + 100 + 20; got.ConfigMaps != wantCMs {
		t.Errorf("config maps = %d, want %d", got.ConfigMaps, wantCMs)
	}
	files := fleetgen.Generate(fleetgen.Spec{})
	if got.Files != len(files) {
		t.Errorf("Describe counts %d files, Generate returns %d", got.Files, len(files))
	}
	got.Regions, got.ConfigMaps, got.Files = 0, 0, 0
	if got != want {
		t.Errorf("Describe(Spec{}) = %+v\nwant %+v", got, want)
	}
	var cts, workloads int
	for p := range files {
		switch {
		case strings.HasSuffix(p, "-cluster-type.yaml"):
			cts++
			if !strings.HasPrefix(p, "environments/dev/cluster-types/") {
				t.Errorf("cluster type outside the environment: %s", p)
			}
		case strings.HasPrefix(p, "workloads/"):
			workloads++
		}
	}
	if cts != 100 || workloads != 100 {
		t.Errorf("files: %d cluster types, %d workloads; want 100 and 100", cts, workloads)
	}
}

// load writes spec into a temporary directory and loads its environment.
func load(t *testing.T, spec fleetgen.Spec) *controlplane.Snapshot {
	t.Helper()
	dir := t.TempDir()
	if err := fleetgen.Write(dir, spec); err != nil {
		t.Fatal(err)
	}
	cp, err := controlplane.Open(t.Context(), dir, controlplane.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if cp.Layout() != controlplane.LayoutFolder {
		t.Fatalf("layout = %s, want folder", cp.Layout())
	}
	snap, err := cp.Load(t.Context(), spec.WithDefaults().Environment)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range snap.Diagnostics {
		t.Errorf("load: %s: %v", d.Severity, d)
	}
	return snap
}

func TestGeneratedFleetLoads(t *testing.T) {
	snap := load(t, small)
	if got := len(snap.ClusterTypes); got != 5 {
		t.Errorf("cluster types = %d, want 5", got)
	}
	if got := len(snap.DeploymentTargets); got != 20 {
		t.Errorf("deployment targets = %d, want 20", got)
	}
	if got := len(snap.Workloads); got != 2 {
		t.Errorf("workloads = %d, want 2", got)
	}
	if snap.GitOpsRepo == nil || len(snap.ConfigSchemas) != 1 || len(snap.Templates) != 4 {
		t.Errorf("gitops repo %v, %d schemas, %d templates; want one, 1 and 4", snap.GitOpsRepo, len(snap.ConfigSchemas), len(snap.Templates))
	}
	for _, dt := range snap.DeploymentTargets {
		if dt.Workspace == "" || dt.Labels["tier"] == "" || dt.Manifests["repo"] == "" || dt.Environment != "dev" {
			t.Errorf("deployment target %s: workspace %q labels %v manifests %v", dt.Name, dt.Workspace, dt.Labels, dt.Manifests)
		}
	}
}

func TestEveryTargetOnEveryClusterType(t *testing.T) {
	for _, spec := range []fleetgen.Spec{small, {Targets: 37, ClusterTypes: 11, Environment: "prod-eu", Seed: 42}} {
		snap := load(t, spec)
		sched := schedule.Schedule(snap)
		for _, d := range sched.Diagnostics {
			t.Errorf("schedule: %v", d)
		}
		if want := spec.Targets * spec.ClusterTypes; len(sched.Assignments) != want {
			t.Fatalf("%+v: %d assignments, want %d", spec, len(sched.Assignments), want)
		}
		pairs := map[string]bool{}
		for _, a := range sched.Assignments {
			pairs[a.ClusterType+"/"+a.DeploymentTarget] = true
		}
		if len(pairs) != len(sched.Assignments) {
			t.Errorf("%d distinct pairs in %d assignments", len(pairs), len(sched.Assignments))
		}

		out := render.Render(snap, sched, render.Options{})
		for _, d := range out.Diagnostics {
			t.Errorf("render: %s: %v", d.Severity, d)
		}
		if failed := out.Failed(); len(failed) > 0 {
			t.Fatalf("%d assignments failed, first: %v", len(failed), failed[0].Err)
		}
		checkRendered(t, out)
	}
}

// checkRendered spot-checks the rendered files of both kinds of cluster types.
func checkRendered(t *testing.T, out *render.Output) {
	t.Helper()
	kinds := map[string]bool{}
	for i := range out.Assignments {
		a := &out.Assignments[i]
		rec := string(a.Files.Reconciler)
		switch {
		case strings.Contains(rec, "source.toolkit.fluxcd.io/v1\n"):
			kinds["builtin/flux"] = true
		case strings.Contains(rec, "source.toolkit.fluxcd.io/v1beta2"):
			kinds["arc-flux"] = true
		case strings.Contains(rec, "argoproj.io"):
			kinds["argocd"] = true
		default:
			t.Errorf("%s: unexpected reconciler:\n%s", a.Dir(), rec)
		}
		cfg := string(a.Files.Config)
		for _, key := range []string{"ENVIRONMENT: " + out.Environment, "REGION: ", "CLUSTER_NAME: " + a.ClusterType, "RESOURCES: "} {
			if !strings.Contains(cfg, key) {
				t.Errorf("%s: platform-config.yaml lacks %q:\n%s", a.Dir(), key, cfg)
				break
			}
		}
	}
	if !kinds["builtin/flux"] || !kinds["arc-flux"] {
		t.Errorf("reconcilers rendered: %v; want builtin and Kalypso-style ones", kinds)
	}
}

func TestWriteRefusesNonEmptyDir(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "keep.txt"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := fleetgen.Write(dir, small); !errors.Is(err, fleetgen.ErrNotEmpty) {
		t.Fatalf("Write into a non-empty dir: %v, want ErrNotEmpty", err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("Write left %d entries, want only keep.txt", len(entries))
	}
}

func TestWriteMatchesGenerate(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "new", "fleet")
	if err := fleetgen.Write(dir, small); err != nil {
		t.Fatal(err)
	}
	want := fleetgen.Generate(small)
	var got []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		got = append(got, rel)
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if !bytes.Equal(data, want[rel]) {
			t.Errorf("%s differs from Generate", rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		sort.Strings(got)
		t.Errorf("wrote %d files, Generate has %d", len(got), len(want))
	}
}

func TestValidate(t *testing.T) {
	for _, tc := range []struct {
		spec fleetgen.Spec
		ok   bool
	}{
		{fleetgen.Spec{}, true},
		{fleetgen.Spec{Targets: 1, ClusterTypes: 1, Environment: "a"}, true},
		{fleetgen.Spec{Targets: -1}, false},
		{fleetgen.Spec{ClusterTypes: fleetgen.MaxClusterTypes + 1}, false},
		{fleetgen.Spec{Environment: "Dev"}, false},
		{fleetgen.Spec{Environment: "a/b"}, false},
		{fleetgen.Spec{Environment: "-dev"}, false},
	} {
		if err := tc.spec.Validate(); (err == nil) != tc.ok {
			t.Errorf("Validate(%+v) = %v, want ok=%v", tc.spec, err, tc.ok)
		}
	}
}
