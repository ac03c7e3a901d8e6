package authoring

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fleetform/fleetform/api/v1alpha1"
)

// environmentDoc declares env in the folder layout.
func environmentDoc(env string) string {
	return "apiVersion: scheduler.kalypso.io/v1alpha1\nkind: Environment\nmetadata:\n  name: " + env + "\n" +
		"spec:\n  controlPlane: {repo: \"\", branch: \"\", path: ./environments/" + env + "}\n"
}

const (
	baseRepoDoc = "apiVersion: scheduler.kalypso.io/v1alpha1\nkind: BaseRepo\nmetadata:\n  name: main\nspec: {repo: \"\", branch: main, path: .}\n"
	edgeDoc     = "apiVersion: scheduler.kalypso.io/v1alpha1\nkind: ClusterType\nmetadata:\n  name: edge\n  labels: {site: a}\n" +
		"spec: {reconciler: builtin/flux, namespaceService: builtin/namespace, configType: builtin/configmap}\n"
	webOnEdgeDoc = "apiVersion: scheduler.kalypso.io/v1alpha1\nkind: SchedulingPolicy\nmetadata:\n  name: web-on-edge\n" +
		"spec:\n  deploymentTargetSelector: {labelSelector: {matchLabels: {purpose: web}}}\n" +
		"  clusterTypeSelector: {labelSelector: {matchLabels: {site: a}}}\n"
)

// controlPlane writes a folder-layout control plane with the environments dev and stage, a
// cluster type edge in each and a policy placing the targets labelled purpose=web on it,
// and files (path: content) on top; it returns its directory.
func controlPlane(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	all := map[string]string{}
	for _, env := range []string{"dev", "stage"} {
		all["environments/"+env+"/environment.yaml"] = environmentDoc(env)
		all["environments/"+env+"/base-repo.yaml"] = baseRepoDoc
		all["environments/"+env+"/cluster-types/edge.yaml"] = edgeDoc
		all["environments/"+env+"/scheduling/web-on-edge.yaml"] = webOnEdgeDoc
	}
	for p, c := range files {
		all[p] = c
	}
	for p, c := range all {
		p = filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(p), 0o750); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(c), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// checkRefused makes op in write mode and checks that it is refused with an error holding
// every one of want, and that no file changed.
func checkRefused(t *testing.T, dir string, files map[string]string, op Operation, want ...string) {
	t.Helper()
	res, err := Apply(t.Context(), Request{ControlPlane: dir, Operations: []Operation{op}, Mode: ModeWrite})
	if !errors.Is(err, ErrInvalid) || res == nil || res.Written || len(res.Errors) != 1 {
		t.Fatalf("%s: %v, %+v; want it refused", op.Describe(), err, res)
	}
	for _, w := range want {
		if !strings.Contains(res.Errors[0].Message, w) {
			t.Errorf("%s: the error %q does not say %q", op.Describe(), res.Errors[0].Message, w)
		}
	}
	for p, c := range files {
		if b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(p))); err != nil || string(b) != c {
			t.Errorf("%s: %s was written (%v):\n%s", op.Describe(), p, err, b)
		}
	}
}

// checkDiff makes op as a dry run and checks that it is valid and that its diff of file has
// every line of want ("-" or "+" first).
func checkDiff(t *testing.T, dir string, op Operation, file string, want ...string) {
	t.Helper()
	res, err := Apply(t.Context(), Request{ControlPlane: dir, Operations: []Operation{op}, Mode: ModeDryRun})
	if err != nil || len(res.Files) != 1 || res.Files[0].Path != file {
		t.Fatalf("%s: %v, %+v; want a change of %s", op.Describe(), err, res, file)
	}
	for _, w := range want {
		if !strings.Contains(res.Files[0].Diff, "\n"+w+"\n") {
			t.Errorf("%s: the diff has no line %q:\n%s", op.Describe(), w, res.Files[0].Diff)
		}
	}
}

const (
	// aliasedWorkload shares its labels between two targets (an anchor and an alias), and a
	// whole target with another (a merge key).
	aliasedWorkload = `apiVersion: scheduler.kalypso.io/v1alpha1
kind: Workload
metadata:
  name: api
spec:
  deploymentTargets:
    - name: web
      environment: dev
      labels: &std
        purpose: web
        region: east
      manifests: {repo: 'https://example.com/api.git', branch: main, path: ./web}
    - name: worker
      environment: dev
      labels: *std # as web
      manifests: {repo: 'https://example.com/api.git', branch: main, path: ./worker}
    - &nightly
      name: nightly
      environment: dev
      labels: {purpose: web}
      manifests: {repo: 'https://example.com/api.git', branch: main, path: ./nightly}
    - <<: *nightly
      name: hourly
`
	// aliasedConfig is a ConfigMap after another document, one value an alias of another.
	aliasedConfig = `apiVersion: v1
kind: ConfigMap
metadata:
  name: other
  labels: {platform-config: "true", cluster-type: edge}
data: {A: b}
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: environment
  labels: {platform-config: "true"}
data:
  REGION: &region east
  ZONE: *region
`
)

// TestAliasedValuesAreNotEditedThroughOneAnother: a change that would go through an alias
// or a merge key, or change or remove a value that an alias refers to, is refused with where
// (file, line, object, field) and what to do, and nothing is written; changes beside the
// aliases are made.
func TestAliasedValuesAreNotEditedThroughOneAnother(t *testing.T) {
	files := map[string]string{"workloads/api.yaml": aliasedWorkload, "environments/dev/config/env.yaml": aliasedConfig}
	target := func(op, name string, labels map[string]string, spec map[string]any) Operation {
		return Operation{Op: op, Kind: KindDeploymentTarget, Name: name, Labels: labels, Spec: spec}
	}
	config := func(op, key string) Operation {
		o := Operation{Op: op, Kind: v1alpha1.KindConfigMap, Env: "dev", Scope: &ConfigScope{EnvironmentWide: true}}
		if op == OpSet {
			o.Data = map[string]any{key: "west"}
		} else {
			o.Keys = []string{key}
		}
		return o
	}
	for _, c := range []struct {
		name string
		op   Operation
		want []string
	}{
		{"labels through an alias", target(OpSet, "api-worker", map[string]string{"tier": "gold"}, nil),
			[]string{"workloads/api.yaml:15: Workload/api: spec.deploymentTargets[1].labels: is an alias (*std) of the value at line 9", "instead of *std"}},
		{"the anchored labels", target(OpSet, "api-web", map[string]string{"region": "west"}, nil),
			[]string{"workloads/api.yaml:9: Workload/api: spec.deploymentTargets[0].labels: is anchored (&std) and spec.deploymentTargets[1].labels (line 15) is an alias of it",
				"would change both", "write the value out in full at spec.deploymentTargets[1].labels instead of the alias *std"}},
		{"the target holding the anchor", target(OpRemove, "api-web", nil, nil), []string{"workloads/api.yaml:9: Workload/api: spec.deploymentTargets[0].labels: is anchored (&std)", "would replace or remove"}},
		{"labels a merge key brings in", target(OpSet, "api-hourly", map[string]string{"tier": "gold"}, nil),
			[]string{"workloads/api.yaml:22: Workload/api: spec.deploymentTargets[3].<<: this merge key (<<) brings labels in from the value at line 17"}},
		{"manifests a merge key brings in", target(OpSet, "api-hourly", nil, map[string]any{"manifests": map[string]any{"path": "./hourly"}}), []string{"brings manifests in"}},
		{"a target merged into another", target(OpSet, "api-nightly", nil, map[string]any{"manifests": map[string]any{"path": "./x"}}), []string{"is anchored (&nightly)"}},
		{"config value an alias refers to", config(OpSet, "REGION"), []string{"environments/dev/config/env.yaml:14: ConfigMap/environment: data.REGION: is anchored (&region) and data.ZONE (line 15) is an alias of it (*region)"}},
		{"config value an alias refers to, unset", config(OpUnset, "REGION"), []string{"environments/dev/config/env.yaml:14: ConfigMap/environment: data.REGION: is anchored (&region)"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			checkRefused(t, controlPlane(t, files), files, c.op, c.want...)
		})
	}
	// Beside the aliases: a value of its own, an alias replaced or removed, a merged value
	// overridden by one of the target's own.
	dir := controlPlane(t, files)
	checkDiff(t, dir, target(OpSet, "api-worker", nil, map[string]any{"manifests": map[string]any{"path": "./w"}}), "workloads/api.yaml",
		"-      manifests: {repo: 'https://example.com/api.git', branch: main, path: ./worker}", "+      manifests: {repo: 'https://example.com/api.git', branch: main, path: ./w}")
	checkDiff(t, dir, target(OpRemove, "api-worker", nil, nil), "workloads/api.yaml", "-      labels: *std # as web")
	checkDiff(t, dir, target(OpSet, "api-hourly", nil, map[string]any{"environment": "stage"}), "workloads/api.yaml", "+      environment: stage")
	checkDiff(t, dir, config(OpSet, "ZONE"), "environments/dev/config/env.yaml", "-  ZONE: *region", "+  ZONE: west")
	checkDiff(t, dir, config(OpUnset, "ZONE"), "environments/dev/config/env.yaml", "-  ZONE: *region")
}

// TestObjectsThroughAnAlias: a Workload's labels or a ConfigMap's data that are an alias
// are not changed through it.
func TestObjectsThroughAnAlias(t *testing.T) {
	wl := "apiVersion: scheduler.kalypso.io/v1alpha1\nkind: Workload\nmetadata:\n  name: api\n" +
		"  annotations: &meta {team: a}\n  labels: *meta\nspec: {deploymentTargets: []}\n"
	cm := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: environment\n  labels: {platform-config: \"true\"}\n" +
		"  annotations: &shared {REGION: east}\ndata: *shared\n"
	files := map[string]string{"workloads/api.yaml": wl, "environments/dev/config/env.yaml": cm}
	dir := controlPlane(t, files)
	checkRefused(t, dir, files, Operation{Op: OpSet, Kind: v1alpha1.KindWorkload, Name: "api", Labels: map[string]string{"tier": "gold"}},
		"workloads/api.yaml:6: Workload/api: metadata.labels: is an alias (*meta) of the value at line 5")
	checkRefused(t, dir, files, Operation{Op: OpSet, Kind: v1alpha1.KindConfigMap, Env: "dev", Scope: &ConfigScope{EnvironmentWide: true},
		Data: map[string]any{"ZONE": "a"}}, "environments/dev/config/env.yaml:7: ConfigMap/environment: data: is an alias (*shared) of the value at line 6")
}

// twoWebs is a workload with a target web in dev and one in stage.
const twoWebs = `apiVersion: scheduler.kalypso.io/v1alpha1
kind: Workload
metadata:
  name: api
spec:
  deploymentTargets:
    - name: web
      environment: dev
      labels: {purpose: web}
      manifests: {repo: 'https://example.com/api.git', branch: main, path: ./dev}
    - name: web
      environment: stage
      labels: {purpose: web}
      manifests: {repo: 'https://example.com/api.git', branch: main, path: ./stage}
`

// TestTargetsAreKnownByNameAndEnvironment: a deployment target's name may be used once per
// environment; --env (Operation.Env) says which one is changed or removed, and a name used
// in several environments without it is refused with the environments to choose from.
func TestTargetsAreKnownByNameAndEnvironment(t *testing.T) {
	files := map[string]string{"workloads/api.yaml": twoWebs}
	dir := controlPlane(t, files)
	if op := Remove(KindDeploymentTarget, "web", "dev", "api"); op.Env != "dev" || op.Workload != "api" {
		t.Fatalf("Remove: %+v, want the target's environment kept", op)
	}
	checkDiff(t, dir, Remove(KindDeploymentTarget, "web", "dev", "api"), "workloads/api.yaml", "-      manifests: {repo: 'https://example.com/api.git', branch: main, path: ./dev}")
	checkDiff(t, dir, Remove(KindDeploymentTarget, "api-web", "stage", ""), "workloads/api.yaml", "-      manifests: {repo: 'https://example.com/api.git', branch: main, path: ./stage}")
	checkDiff(t, dir, Operation{Op: OpSet, Kind: KindDeploymentTarget, Name: "web", Workload: "api", Env: "stage", Labels: map[string]string{"tier": "gold"}},
		"workloads/api.yaml", "+      labels: {purpose: web, tier: gold}", "       environment: stage")
	checkRefused(t, dir, files, Remove(KindDeploymentTarget, "api-web", "", ""),
		`workloads/api.yaml:7: Workload/api: spec.deploymentTargets: deployment target "web" is defined for several environments: dev (line 7), stage (line 11)`,
		"--env dev or --env stage")
	checkRefused(t, dir, files, Remove(KindDeploymentTarget, "web", "prod", "api"), `workload api has no deployment target "web" in environment prod`)
	checkRefused(t, dir, files, Operation{Op: OpAdd, Kind: KindDeploymentTarget, Name: "web", Workload: "api", Spec: TargetSpec("stage", "https://example.com/api.git", "", "")},
		`workload api already has a deployment target "web" in environment stage (workloads/api.yaml:11)`)

	// A name used in one environment is another environment's to use too.
	one := map[string]string{"workloads/api.yaml": strings.SplitAfter(twoWebs, "path: ./dev}\n")[0]}
	dir = controlPlane(t, one)
	checkDiff(t, dir, Operation{Op: OpAdd, Kind: KindDeploymentTarget, Name: "web", Workload: "api", Spec: TargetSpec("stage", "https://example.com/api.git", "", "")},
		"workloads/api.yaml", "+      environment: stage")
	checkDiff(t, dir, Remove(KindDeploymentTarget, "api-web", "", ""), "workloads/api.yaml", "-      environment: dev")
}

// TestObjectInSeveralFilesIsNotGuessed: an object that more than one file the control plane
// reads holds (an old copy left beside it) is neither changed nor removed: the error names
// the files. (A copy in a file the control plane does not read is not one of them:
// TestObjectsLeftOutAreNotEdited.)
func TestObjectInSeveralFilesIsNotGuessed(t *testing.T) {
	live := strings.SplitAfter(twoWebs, "path: ./dev}\n")[0]
	files := map[string]string{
		"workloads/api-2024.yaml": "# retired\n" + strings.ReplaceAll(live, "./dev", "./old"),
		"workloads/api.yaml":      live,
	}
	dir := controlPlane(t, files)
	want := "workloads/api-2024.yaml:2: Workload/api: is defined in 2 files: workloads/api-2024.yaml:2, workloads/api.yaml:1"
	checkRefused(t, dir, files, Remove(v1alpha1.KindWorkload, "api", "", ""), want, "keep one of them")
	checkRefused(t, dir, files, Operation{Op: OpSet, Kind: v1alpha1.KindWorkload, Name: "api", Labels: map[string]string{"tier": "gold"}}, want)
	checkRefused(t, dir, files, Remove(KindDeploymentTarget, "api-web", "", ""), want)
}

// TestLookupThroughMergeKeys: a key is found through aliases and merge keys (the first
// source that has it), and a mapping that merges itself, over and over, ends the search.
func TestLookupThroughMergeKeys(t *testing.T) {
	t.Parallel()
	f, err := parseYAMLFile([]byte("a: &a {x: 1}\nb: &b {<<: [*a, {x: 2, y: 3}], z: 4}\nc: *b\n" +
		"d: &d {<<: [*d, *d, *d, *d, *d, *d, *d, *d], <<: [*d, *d, *d, *d, *d, *d, *d, *d]}\n"))
	if err != nil {
		t.Fatal(err)
	}
	root := f.docs[0].root()
	for _, c := range []struct{ in, key, want string }{
		{"b", "x", "1"}, {"b", "y", "3"}, {"b", "z", "4"}, {"c", "x", "1"}, {"c", "w", ""}, {"d", "x", ""},
	} {
		if got := scalar(lookup(get(root, c.in), c.key)); got != c.want {
			t.Errorf("%s.%s = %q, want %q", c.in, c.key, got, c.want)
		}
	}
}
