package pipeline_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/fleetform/fleetform/internal/dev/fleetgen"
	"github.com/fleetform/fleetform/internal/gitops"
	"github.com/fleetform/fleetform/internal/schedule"
	"github.com/fleetform/fleetform/internal/testutil/gittest"
)

// applyOnce loads the fleet and applies it to the bare repository at repo.
func applyOnce(b *testing.B, w *gitops.Writer, dir, repo string, spec fleetgen.Spec) *gitops.Result {
	b.Helper()
	snap := load(b.Context(), b, dir, spec.Environment)
	in := gitops.Input{Snapshot: snap, Schedule: schedule.Schedule(snap),
		Target: gitops.Target{Repo: repo, Branch: spec.Environment, Path: "."}}
	res, err := w.Apply(b.Context(), in, gitops.CommitOptions{})
	if err != nil {
		b.Fatal(err)
	}
	return res
}

// BenchmarkApplyCold renders the whole fleet and writes it into an empty repository:
// load + schedule + compose + render + objects + commit + ref update. Quality bar: ≤ 10 s
// and ≤ 2 GiB for 100,000 assignments (300,100 files).
func BenchmarkApplyCold(b *testing.B) {
	dir, spec := writeFleet(b)
	w := gitops.NewWriter(gitops.Options{CacheDir: b.TempDir()})
	m := startMemProbe()
	var res *gitops.Result
	for b.Loop() {
		b.StopTimer()
		repo, err := gittest.InitRepo(filepath.Join(b.TempDir(), "gitops.git"), true)
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		res = applyOnce(b, w, dir, repo.Dir, spec)
	}
	m.report(b, spec.Targets*spec.ClusterTypes)
	if res.Commit.IsZero() || res.Plan.Rendered != spec.Targets*spec.ClusterTypes {
		b.Fatalf("cold apply wrote %s, rendered %d", res.Commit, res.Plan.Rendered)
	}
	b.ReportMetric(float64(len(res.Plan.Changes)), "files")
}

// appliedFleet writes the synthetic fleet, applies it once into a new bare repository and
// returns the writer, the control plane's folder, the repository and the fleet's shape.
func appliedFleet(b *testing.B) (*gitops.Writer, string, string, fleetgen.Spec) {
	b.Helper()
	dir, spec := writeFleet(b)
	repo, err := gittest.InitRepo(filepath.Join(b.TempDir(), "gitops.git"), true)
	if err != nil {
		b.Fatal(err)
	}
	w := gitops.NewWriter(gitops.Options{CacheDir: b.TempDir()})
	applyOnce(b, w, dir, repo.Dir, spec)
	return w, dir, repo.Dir, spec
}

// BenchmarkApplyOneClusterType changes one config value of one cluster type (its 1,000
// assignments) and applies. Quality bar: ≤ 1 s, and the commit touches exactly those
// assignments' platform-config files (and fleetform's state file).
func BenchmarkApplyOneClusterType(b *testing.B) {
	w, dir, repo, spec := appliedFleet(b)
	cfg := clusterTypeConfig(b, dir)
	values := [][]byte{[]byte(`NODE_COUNT: "41"`), []byte(`NODE_COUNT: "42"`)}
	m := startMemProbe()
	var res *gitops.Result
	i := 0
	for b.Loop() {
		b.StopTimer()
		setConfigValue(b, cfg, values[i%2])
		i++
		b.StartTimer()
		res = applyOnce(b, w, dir, repo, spec)
	}
	m.report(b, 0)
	if res.Commit.IsZero() || len(res.Plan.Changes) != spec.Targets || res.Plan.Rendered != spec.Targets || !res.Plan.StateChanged {
		b.Fatalf("commit %s: %d files changed, %d rendered; want %d of each", res.Commit, len(res.Plan.Changes), res.Plan.Rendered, spec.Targets)
	}
	for _, c := range res.Plan.Changes {
		if c.Action != "modify" || filepath.Base(c.Path) != "platform-config.yaml" {
			b.Fatalf("unexpected change %s %s", c.Action, c.Path)
		}
	}
	b.ReportMetric(float64(len(res.Plan.Changes)), "files")
}

// BenchmarkApplyNoChange applies an unchanged control plane: nothing is rendered, nothing
// committed. Quality bar: ≤ 1 s.
func BenchmarkApplyNoChange(b *testing.B) {
	w, dir, repo, spec := appliedFleet(b)
	m := startMemProbe()
	var res *gitops.Result
	for b.Loop() {
		res = applyOnce(b, w, dir, repo, spec)
	}
	m.report(b, 0)
	if !res.Commit.IsZero() || !res.Plan.NoChange() || res.Plan.Rendered != 0 {
		b.Fatalf("no-change apply wrote %s and rendered %d", res.Commit, res.Plan.Rendered)
	}
}

// clusterTypeConfig returns the file of the first cluster type's ConfigMap.
func clusterTypeConfig(b *testing.B, dir string) string {
	b.Helper()
	matches, err := filepath.Glob(filepath.Join(dir, "environments", "*", "cluster-types", "*", "*", "*-config.yaml"))
	if err != nil || len(matches) == 0 {
		b.Fatalf("no cluster-type config in %s: %v", dir, err)
	}
	return matches[0]
}

// setConfigValue replaces the NODE_COUNT line of a ConfigMap file.
func setConfigValue(b *testing.B, file string, line []byte) {
	b.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		b.Fatal(err)
	}
	var out [][]byte
	found := false
	for _, l := range bytes.Split(data, []byte("\n")) {
		if bytes.HasPrefix(bytes.TrimSpace(l), []byte("NODE_COUNT:")) {
			indent := l[:len(l)-len(bytes.TrimLeft(l, " "))]
			l = append(append([]byte{}, indent...), line...)
			found = true
		}
		out = append(out, l)
	}
	if !found {
		b.Fatalf("%s has no NODE_COUNT", file)
	}
	if err := os.WriteFile(file, bytes.Join(out, []byte("\n")), 0o644); err != nil {
		b.Fatal(err)
	}
}
