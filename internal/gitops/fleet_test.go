package gitops_test

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/fleetform/fleetform/internal/controlplane"
	"github.com/fleetform/fleetform/internal/gitops"
	"github.com/fleetform/fleetform/internal/schedule"
	"github.com/fleetform/fleetform/internal/testutil/gittest"
)

// fleet is a small control plane in the folder layout, kept as branch main of a git
// repository so that snapshots have a control-plane commit. Every cluster type gets every
// deployment target of workload shop (all on built-in templates).
type fleet struct {
	t         *testing.T
	repo      *gittest.Repo
	files     map[string]string
	committed map[string]string // the files of main's tip
}

// fleetTypes and fleetTargets are the fleet's initial cluster types and deployment targets.
var (
	fleetTypes   = []string{"east", "north", "south", "west"}
	fleetTargets = []string{"api", "db", "web"}
)

func newFleet(t *testing.T) *fleet {
	t.Helper()
	f := &fleet{t: t, repo: gittest.NewBare(t).Checked(t), files: map[string]string{
		"environments/dev/environment.yaml": `apiVersion: scheduler.kalypso.io/v1alpha1
kind: Environment
metadata: {name: dev}
spec:
  controlPlane: {repo: https://example.com/cp, branch: main, path: .}
`,
		"environments/dev/policy.yaml": `apiVersion: scheduler.kalypso.io/v1alpha1
kind: SchedulingPolicy
metadata: {name: all}
spec:
  deploymentTargetSelector: {labelSelector: {}}
  clusterTypeSelector: {labelSelector: {}}
`,
		"environments/dev/dev-config.yaml": envConfig("info"),
	}}
	for _, ct := range fleetTypes {
		f.addClusterType(ct)
	}
	f.setTargets(fleetTargets...)
	return f
}

func envConfig(level string) string {
	return `apiVersion: v1
kind: ConfigMap
metadata: {name: dev-config, labels: {platform-config: "true"}}
data: {REPLICAS: "2", LOG_LEVEL: ` + level + `}
`
}

// addClusterType adds a cluster type and its own platform config (NODE_COUNT "3").
func (f *fleet) addClusterType(ct string) {
	f.setConfigType(ct, "builtin/configmap")
	f.setNodeCount(ct, "3")
}

// setConfigType sets the config template of a cluster type.
func (f *fleet) setConfigType(ct, template string) {
	f.files["environments/dev/cluster-types/"+ct+".yaml"] = `apiVersion: scheduler.kalypso.io/v1alpha1
kind: ClusterType
metadata: {name: ` + ct + `, labels: {region: ` + ct + `}}
spec: {reconciler: builtin/flux, namespaceService: builtin/namespace, configType: ` + template + `}
`
}

// removeClusterType removes a cluster type and its config.
func (f *fleet) removeClusterType(ct string) {
	delete(f.files, "environments/dev/cluster-types/"+ct+".yaml")
	delete(f.files, "environments/dev/cluster-types/"+ct+"-config.yaml")
}

// setNodeCount sets one cluster type's NODE_COUNT.
func (f *fleet) setNodeCount(ct, n string) {
	f.files["environments/dev/cluster-types/"+ct+"-config.yaml"] = `apiVersion: v1
kind: ConfigMap
metadata: {name: ` + ct + `-config, labels: {platform-config: "true", cluster-type: ` + ct + `}}
data: {NODE_COUNT: "` + n + `"}
`
}

// setTargets makes workload shop have exactly these deployment targets (none: an empty
// workload file).
func (f *fleet) setTargets(names ...string) {
	if len(names) == 0 {
		f.files["shop.yaml"] = "# no workloads\n"
		return
	}
	var b strings.Builder
	b.WriteString(`apiVersion: scheduler.kalypso.io/v1alpha1
kind: Workload
metadata: {name: shop, labels: {workspace: retail}}
spec:
  deploymentTargets:
`)
	for _, n := range names {
		fmt.Fprintf(&b, "    - {name: %s, environment: dev, manifests: {repo: https://example.com/shop, branch: main, path: ./%s}}\n", n, n)
	}
	f.files["shop.yaml"] = b.String()
}

// input commits the control plane as it is now (when it changed) and loads environment
// dev, for target.
func (f *fleet) input(target gitops.Target) gitops.Input {
	f.t.Helper()
	if f.committed == nil || !maps.Equal(f.committed, f.files) {
		f.repo.Commit(f.t, "main", f.files)
		f.committed = maps.Clone(f.files)
	}
	cp, err := controlplane.Open(f.t.Context(), f.repo.Dir, controlplane.Options{Ref: "main"})
	if err != nil {
		f.t.Fatal(err)
	}
	snap, err := cp.Load(f.t.Context(), "dev")
	if err != nil {
		f.t.Fatal(err)
	}
	return gitops.Input{Snapshot: snap, Schedule: schedule.Schedule(snap), Target: target}
}

// assignmentFiles are the files the built-in templates render for one assignment.
var assignmentFiles = []string{"namespace.yaml", "platform-config.yaml", "reconciler.yaml"}

// wantTree is the GitOps tree (without fleetform's state) for these cluster types, each
// with every one of targets (deployment targets shop-<target>), under base.
func wantTree(base string, types, targets []string) []string {
	var out []string
	for _, ct := range types {
		out = append(out, base+ct+"/README.md")
		for _, dt := range targets {
			for _, name := range assignmentFiles {
				out = append(out, base+ct+"/shop-"+dt+"/"+name)
			}
		}
	}
	return out
}

// newWriter returns a writer with its own cache and the options given.
func newWriter(t *testing.T, opts gitops.Options) *gitops.Writer {
	t.Helper()
	if opts.CacheDir == "" {
		opts.CacheDir = t.TempDir()
	}
	return gitops.NewWriter(opts)
}

// apply applies and fails the test on an error.
func apply(t *testing.T, w *gitops.Writer, in gitops.Input, co gitops.CommitOptions) *gitops.Result {
	t.Helper()
	res, err := w.Apply(t.Context(), in, co)
	if err != nil {
		t.Fatalf("apply: %v", err)
	}
	return res
}

// treeFiles lists the files at rev, sorted.
func treeFiles(t *testing.T, dir, rev string) []string {
	t.Helper()
	return strings.Fields(gitCLI(t, dir, "ls-tree", "-r", "--name-only", rev))
}

// withoutState drops fleetform's state files and the promoted-commit file from paths.
func withoutState(paths []string, base string) []string {
	return slices.DeleteFunc(slices.Clone(paths), func(p string) bool {
		return strings.HasPrefix(p, base+gitops.StateDir+"/") || strings.HasPrefix(p, ".github/")
	})
}

// changedPaths lists the files a commit changed, with their status letter (A, M, D).
func changedPaths(t *testing.T, dir, commit string) map[string]string {
	t.Helper()
	out := gitCLI(t, dir, "diff-tree", "--no-commit-id", "--name-status", "-r", "--root", commit)
	got := map[string]string{}
	for line := range strings.Lines(out) {
		status, p, ok := strings.Cut(strings.TrimSpace(line), "\t")
		if ok {
			got[p] = status
		}
	}
	return got
}

// commitCount counts the commits of branch dev.
func commitCount(t *testing.T, dir string) int {
	t.Helper()
	n := 0
	if _, err := fmt.Sscan(gitCLI(t, dir, "rev-list", "--count", "dev"), &n); err != nil {
		t.Fatal(err)
	}
	return n
}

// changeSet summarises plan changes as path -> action.
func changeSet(p *gitops.Plan) map[string]string {
	out := map[string]string{}
	for _, c := range p.Changes {
		out[c.Path] = c.Action
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }
