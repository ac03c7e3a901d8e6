package fleet_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fleetform/fleetform/internal/authoring"
	"github.com/fleetform/fleetform/internal/fleet"
	"github.com/fleetform/fleetform/internal/testutil/gittest"
)

// lineControlPlane is a control plane of dev with cluster type plant, where policy line
// places every deployment target labelled purpose=line.
func lineControlPlane(t *testing.T) *fleet.Fleet {
	t.Helper()
	r := gittest.NewBare(t)
	r.Commit(t, "main", map[string]string{
		"environments/dev/env.yaml": environment("dev", ""),
		"environments/dev/plant.yaml": `apiVersion: scheduler.kalypso.io/v1alpha1
kind: ClusterType
metadata: {name: plant}
spec: {reconciler: builtin/flux, namespaceService: builtin/namespace, configType: builtin/configmap}
---
apiVersion: scheduler.kalypso.io/v1alpha1
kind: SchedulingPolicy
metadata: {name: line}
spec:
  deploymentTargetSelector: {labelSelector: {matchLabels: {purpose: line}}}
  clusterTypeSelector: {labelSelector: {}}
`,
	})
	return fleet.New(fleet.Config{ControlPlane: r.Dir, CacheDir: t.TempDir()})
}

// addedTargets lists the deployment targets the plan of res places, in every environment.
func addedTargets(res *authoring.Result) []string {
	var out []string
	for _, p := range res.Plan {
		for _, a := range p.AssignmentsAdded {
			out = append(out, a.DeploymentTarget)
		}
	}
	slices.Sort(out)
	return out
}

const appRepo = "https://github.com/contoso/line-monitor"

// TestOnboardAppWritesStartingWorkload: with no workload.yaml in the application's work
// tree, onboard app writes the starting one, readable as any file of a repository, and
// validates it: the plan places its target.
func TestOnboardAppWritesStartingWorkload(t *testing.T) {
	appDir := t.TempDir()
	res, err := lineControlPlane(t).OnboardApp(t.Context(), fleet.OnboardAppRequest{Name: "line-monitor", Repo: appRepo,
		Workspace: "factory", Branch: "main", Targets: []fleet.AppTarget{{Name: "line", Environment: "dev"}},
		AppDir: appDir, Mode: authoring.ModeCommit})
	if err != nil {
		t.Fatalf("onboard app: %+v, %v", res, err)
	}
	p := filepath.Join(appDir, fleet.WorkloadFolder, "workload.yaml")
	got, err := os.ReadFile(p)
	if err != nil || !strings.Contains(string(got), "- name: line\n") {
		t.Fatalf("%s: %q, %v; want the starting workload with target line", p, got, err)
	}
	if want := []string{"line-monitor-line"}; !slices.Equal(addedTargets(res), want) {
		t.Errorf("plan places %v, want %v", addedTargets(res), want)
	}
	// The file is created as os.WriteFile(…, 0o644) creates one under this process's umask.
	ref := filepath.Join(t.TempDir(), "ref")
	if err := os.WriteFile(ref, nil, 0o644); err != nil { //nolint:gosec // the mode of a file readable by all, to compare with
		t.Fatal(err)
	}
	fi, err := os.Stat(p)
	ri, rerr := os.Stat(ref)
	if err != nil || rerr != nil || fi.Mode().Perm() != ri.Mode().Perm() {
		t.Errorf("%s has mode %v, want %v (a file of the repository, readable by all): %v %v", p, fi.Mode(), ri.Mode(), err, rerr)
	}
}

// TestOnboardAppKeepsExistingWorkload: a workload.yaml already in the application's work
// tree (Kalypso's sample layout) is kept byte for byte, comments included, and it is the
// one validated and planned: its two targets are placed, not the one --target names; a
// note says it was kept. A dry run says the same.
func TestOnboardAppKeepsExistingWorkload(t *testing.T) {
	const existing = `# Maintained by hand: two lines of the plant.
apiVersion: scheduler.kalypso.io/v1alpha1
kind: Workload
metadata:
  name: line-monitor
spec:
  deploymentTargets:
    - name: line-a # the first line
      environment: dev
      labels: {purpose: line}
      manifests: {repo: https://github.com/contoso/line-monitor, branch: main, path: ./line-a}
    - name: line-b
      environment: dev
      labels: {purpose: line}
      manifests: {repo: https://github.com/contoso/line-monitor, branch: main, path: ./line-b}
`
	for _, mode := range []authoring.Mode{authoring.ModeDryRun, authoring.ModeCommit} {
		t.Run(string(mode), func(t *testing.T) {
			appDir := t.TempDir()
			p := filepath.Join(appDir, fleet.WorkloadFolder, "workload.yaml")
			if err := os.MkdirAll(filepath.Dir(p), 0o750); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte(existing), 0o600); err != nil {
				t.Fatal(err)
			}
			res, err := lineControlPlane(t).OnboardApp(t.Context(), fleet.OnboardAppRequest{Name: "line-monitor", Repo: appRepo,
				Workspace: "factory", Branch: "main", Targets: []fleet.AppTarget{{Name: "other", Environment: "dev"}},
				AppDir: appDir, Mode: mode})
			if err != nil {
				t.Fatalf("onboard app: %+v, %v", res, err)
			}
			if got, err := os.ReadFile(p); err != nil || string(got) != existing {
				t.Errorf("%s is now %q (%v), want it kept as it was", p, got, err)
			}
			if want := []string{"line-monitor-line-a", "line-monitor-line-b"}; !slices.Equal(addedTargets(res), want) {
				t.Errorf("plan places %v, want the existing file's targets %v", addedTargets(res), want)
			}
			if !slices.ContainsFunc(res.Notes, func(n string) bool {
				return strings.Contains(n, "kept "+p) && strings.Contains(n, "--target")
			}) {
				t.Errorf("notes %q do not say that %s was kept and --target not written into it", res.Notes, p)
			}
		})
	}
}

// TestOnboardAppUnreadableWorkload: a workload.yaml that exists but cannot be read (here a
// folder) is an error naming it, before anything is written.
func TestOnboardAppUnreadableWorkload(t *testing.T) {
	appDir := t.TempDir()
	p := filepath.Join(appDir, fleet.WorkloadFolder, "workload.yaml")
	if err := os.MkdirAll(p, 0o750); err != nil {
		t.Fatal(err)
	}
	res, err := lineControlPlane(t).OnboardApp(t.Context(), fleet.OnboardAppRequest{Name: "line-monitor", Repo: appRepo,
		Workspace: "factory", Branch: "main", AppDir: appDir, Mode: authoring.ModeCommit})
	if err == nil || !strings.Contains(err.Error(), p) || (res != nil && res.Written) {
		t.Errorf("onboard app over a folder workload.yaml: %+v, %v; want an error naming %s, nothing written", res, err, p)
	}
}
