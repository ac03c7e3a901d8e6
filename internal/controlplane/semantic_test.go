package controlplane_test

import (
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/fleetform/fleetform/internal/controlplane"
)

// TestSemanticChecks: documents that decode but cannot be used are reported on the line of
// the field at fault and left out; everything else loads.
func TestSemanticChecks(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("a", 254)
	tests := []struct {
		name   string
		files  map[string]string
		want   []want
		loaded []string
	}{
		{
			name:  "uppercase name",
			files: map[string]string{"cts.yaml": clusterTypeDoc("Large")},
			want:  []want{{file: "cts.yaml", line: 4, has: []string{"ClusterType/Large", `invalid name "Large"`}}},
		},
		{
			name:  "name with a slash",
			files: map[string]string{"cts.yaml": clusterTypeDoc("west/large")},
			want:  []want{{file: "cts.yaml", line: 4, has: []string{`invalid name "west/large"`}}},
		},
		{
			name:  "name too long",
			files: map[string]string{"t.yaml": templateDoc(long)},
			want:  []want{{file: "t.yaml", line: 4, has: []string{"invalid name", "must be no more than 253 characters"}}},
		},
		{
			name:   "longest valid name",
			files:  map[string]string{"t.yaml": templateDoc(long[:253])},
			loaded: []string{"Template/" + long[:253]},
		},
		{
			name: "invalid declared namespace",
			files: map[string]string{"dt.yaml": kindDoc("DeploymentTarget", "shop",
				"spec:\n  environment: dev\n  namespace: Shop_A\n  manifests: {repo: r, branch: b, path: p}\n")},
			want: []want{{file: "dt.yaml", line: 7, has: []string{"spec.namespace", `namespace "Shop_A" is not a valid namespace name`}}},
		},
		{
			name: "invalid label key and value",
			files: map[string]string{"cts.yaml": kindDoc("ClusterType", "large",
				"  labels:\n    \"bad key\": x\n    size: \"not valid\"\nspec: {reconciler: a, namespaceService: b, configType: c}\n")},
			want: []want{
				{file: "cts.yaml", line: 6, has: []string{"metadata.labels.bad key", "invalid label key"}},
				{file: "cts.yaml", line: 7, has: []string{"metadata.labels.size", "invalid label value"}},
			},
		},
		{
			name: "duplicate names across files: the first wins, the error names both",
			files: map[string]string{
				"a/cts.yaml": joinDocs(clusterTypeDoc("small"), clusterTypeDoc("large")), // large on lines 10-17
				"b/cts.yaml": clusterTypeDoc("large"),
			},
			want:   []want{{file: "b/cts.yaml", line: 4, has: []string{`duplicate ClusterType "large"`, "already defined at a/cts.yaml:10", "the first definition is used"}}},
			loaded: []string{"ClusterType/large", "ClusterType/small"},
		},
		{
			name: "same name, different kinds",
			files: map[string]string{
				"a.yaml": joinDocs(clusterTypeDoc("x"), templateDoc("x"), configMapDoc("x")),
			},
			loaded: []string{"ClusterType/x", "ConfigMap/x", "Template/x"},
		},
		{
			name: "duplicate deployment target in one workload",
			files: map[string]string{"w.yaml": kindDoc("Workload", "app", "spec:\n  deploymentTargets:\n"+
				"    - name: web\n      environment: dev\n      manifests: {}\n"+
				"    - name: web\n      environment: dev\n      manifests: {}\n")},
			want:   []want{{file: "w.yaml", line: 10, has: []string{"spec.deploymentTargets[1].name", `deployment target "web" is defined twice for environment "dev"`, "spec.deploymentTargets[0]"}}},
			loaded: []string{"Workload/app", "DeploymentTarget/app-web"},
		},
		{
			name: "one deployment target name in two environments (Kalypso: one target per environment)",
			files: map[string]string{"w.yaml": kindDoc("Workload", "observability", "spec:\n  deploymentTargets:\n"+
				"    - name: prometheus\n      environment: dev\n      manifests: {}\n"+
				"    - name: prometheus\n      environment: prod\n      manifests: {}\n")},
			loaded: []string{"Workload/observability", "DeploymentTarget/observability-prometheus", "DeploymentTarget/observability-prometheus"},
		},
		{
			name: "two workloads unfolding to one name in different environments",
			files: map[string]string{
				"a.yaml": workloadDoc("a", "b-dev"),
				"b.yaml": kindDoc("Workload", "a-b", "spec:\n  deploymentTargets:\n    - name: dev\n      environment: prod\n      manifests: {}\n"),
			},
			loaded: []string{"Workload/a", "Workload/a-b", "DeploymentTarget/a-b-dev", "DeploymentTarget/a-b-dev"},
		},
		{
			name: "two workloads unfolding to the same deployment target name",
			files: map[string]string{
				"a.yaml": workloadDoc("a", "b-dev"),
				"b.yaml": kindDoc("Workload", "a-b", "spec:\n  deploymentTargets:\n    - name: dev\n      environment: b-dev\n      manifests: {}\n"),
			},
			want:   []want{{file: "b.yaml", line: 7, has: []string{`deployment target "a-b-dev" of environment "b-dev" is already defined at a.yaml:7`}}},
			loaded: []string{"Workload/a", "Workload/a-b", "DeploymentTarget/a-b-dev"},
		},
		{
			name: "workload target without environment",
			files: map[string]string{"w.yaml": kindDoc("Workload", "app", "spec:\n  deploymentTargets:\n"+
				"    - name: web\n      manifests: {}\n"+
				"    - name: api\n      environment: dev\n      manifests: {}\n")},
			want:   []want{{file: "w.yaml", line: 7, has: []string{"spec.deploymentTargets[0].environment", "environment is required"}}},
			loaded: []string{"Workload/app", "DeploymentTarget/app-api"},
		},
		{
			name: "workload target without name",
			files: map[string]string{"w.yaml": kindDoc("Workload", "app", "spec:\n  deploymentTargets:\n"+
				"    - environment: dev\n      manifests: {}\n")},
			want:   []want{{file: "w.yaml", line: 7, has: []string{"spec.deploymentTargets[0].name", "name is required"}}},
			loaded: []string{"Workload/app"},
		},
		{
			name: "workload target with an invalid name",
			files: map[string]string{"w.yaml": kindDoc("Workload", "app", "spec:\n  deploymentTargets:\n"+
				"    - name: Web\n      environment: dev\n      manifests: {}\n")},
			want:   []want{{file: "w.yaml", line: 7, has: []string{`deployment target name "app-Web" is invalid`}}},
			loaded: []string{"Workload/app"},
		},
		{
			name:  "template with an unknown type",
			files: map[string]string{"t.yaml": kindDoc("Template", "flux", "spec:\n  type: reconciller\n  manifests: [x]\n")},
			want:  []want{{file: "t.yaml", line: 6, has: []string{"Template/flux", "spec.type", `unknown template type "reconciller"`}}},
		},
		{
			name:  "template without manifests",
			files: map[string]string{"t.yaml": kindDoc("Template", "flux", "spec:\n  type: reconciler\n  manifests: []\n")},
			want:  []want{{file: "t.yaml", line: 7, has: []string{"spec.manifests", "at least one manifest"}}},
		},
		{
			name:  "BaseRepo without a repository",
			files: map[string]string{"environments/dev/base.yaml": kindDoc("BaseRepo", "global", "spec: {repo: \"\", branch: main, path: .}\n")},
			want:  []want{{file: "environments/dev/base.yaml", line: 5, has: []string{"BaseRepo/global", "spec.repo", "repo is required"}}},
		},
		{
			name: "two GitOpsRepos: the first is kept",
			files: map[string]string{"environments/dev/gitops.yaml": joinDocs(
				kindDoc("GitOpsRepo", "one", "spec: {repo: r1, branch: dev, path: .}\n"),
				kindDoc("GitOpsRepo", "two", "spec: {repo: r2, branch: dev, path: .}\n"))},
			want:   []want{{file: "environments/dev/gitops.yaml", line: 10, has: []string{"GitOpsRepo/two", `one GitOpsRepo; "one" is already defined at environments/dev/gitops.yaml:1`}}},
			loaded: []string{"GitOpsRepo/one"},
		},
		{
			name:  "GitOpsRepo without repo",
			files: map[string]string{"environments/dev/gitops.yaml": kindDoc("GitOpsRepo", "dev", "spec: {repo: \"\", branch: dev, path: .}\n")},
			want:  []want{{file: "environments/dev/gitops.yaml", line: 5, has: []string{"spec.repo", "repo is required"}}},
		},
		{
			name: "registration without repo",
			files: map[string]string{"regs.yaml": kindDoc("WorkloadRegistration", "team",
				"spec:\n  workload:\n    repo: \"\"\n    branch: main\n    path: .\n")},
			want: []want{{file: "regs.yaml", line: 7, has: []string{"spec.workload.repo", "repo is required"}}},
		},
		{
			name: "DeploymentTarget document without environment",
			files: map[string]string{"dt.yaml": kindDoc("DeploymentTarget", "web", "spec:\n  environment: \"\"\n  manifests: {}\n") +
				"---\n" + kindDoc("DeploymentTarget", "api", "spec:\n  environment: dev\n  manifests: {}\n")},
			want:   []want{{file: "dt.yaml", line: 6, has: []string{"DeploymentTarget/web", "spec.environment", "environment is required"}}},
			loaded: []string{"DeploymentTarget/api"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			snap := loadFolder(t, tt.files)
			checkDiags(t, snap.Diagnostics, tt.want...)
			checkLoaded(t, snap, tt.loaded...)
		})
	}
}

// TestDuplicateFirstWins: of two definitions the first read is kept, and the environment's
// own content is read before the common content.
func TestDuplicateFirstWins(t *testing.T) {
	t.Parallel()
	snap := loadFolder(t, map[string]string{
		"a.yaml":                   kindDoc("ClusterType", "large", "spec: {reconciler: from-a, namespaceService: n, configType: c}\n"),
		"b.yaml":                   kindDoc("ClusterType", "large", "spec: {reconciler: from-b, namespaceService: n, configType: c}\n"),
		"environments/dev/ct.yaml": kindDoc("ClusterType", "small", "spec: {reconciler: from-env, namespaceService: n, configType: c}\n"),
		"common.yaml":              kindDoc("ClusterType", "small", "spec: {reconciler: from-common, namespaceService: n, configType: c}\n"),
	})
	checkDiags(t, snap.Diagnostics,
		want{file: "b.yaml", line: 4, has: []string{`duplicate ClusterType "large": already defined at a.yaml:1`}},
		want{file: "common.yaml", line: 4, has: []string{`duplicate ClusterType "small": already defined at environments/dev/ct.yaml:1`}},
	)
	got := map[string]string{}
	for _, ct := range snap.ClusterTypes {
		got[ct.Metadata.Name] = ct.Spec.Reconciler + "@" + ct.Source.File
	}
	wantCTs := map[string]string{"large": "from-a@a.yaml", "small": "from-env@environments/dev/ct.yaml"}
	if !maps.Equal(got, wantCTs) {
		t.Errorf("cluster types = %v, want %v", got, wantCTs)
	}
}

// TestWorkloadUnfolding checks Kalypso's unfolding: name <workload>-<target>, labels of the
// target then the workload's (which win), then workload and workspace (which always win);
// schemas of the target then the workload's; targets of every environment are kept.
func TestWorkloadUnfolding(t *testing.T) {
	t.Parallel()
	snap := loadFolder(t, map[string]string{"w.yaml": kindDoc("Workload", "shop",
		"  labels:\n    workspace: shop-team\n    tier: from-workload\n"+ // 5-7
			"spec:\n  configSchemas: ['{\"title\":\"workload\"}']\n  deploymentTargets:\n"+ // 8-10
			"    - name: web\n"+ // 11
			"      labels: {tier: from-target, purpose: web, workload: spoofed, workspace: spoofed}\n"+
			"      environment: dev\n"+
			"      manifests: {repo: https://example.com/shop, branch: dev, path: ./web, extra: x}\n"+
			"      configSchemas: ['{\"title\":\"target\"}']\n"+
			"    - name: web\n"+ // 16: same target name, other environment: a target of its own (Kalypso)
			"      environment: stage\n      manifests: {}\n"+
			"    - name: batch\n"+ // 19
			"      environment: stage\n      manifests: {}\n"+
			"    - name: web\n"+ // 22: same name, same environment: a duplicate
			"      environment: dev\n      manifests: {}\n")})
	checkDiags(t, snap.Diagnostics, want{file: "w.yaml", line: 22, has: []string{
		`deployment target "web" is defined twice for environment "dev"`, "spec.deploymentTargets[0]"}})
	equal(t, "targets", targetNames(snap), []string{"shop-batch", "shop-web", "shop-web"})
	var web *controlplane.DeploymentTarget
	for _, dt := range snap.DeploymentTargets {
		if dt.Name == "shop-web" && dt.Environment == "dev" {
			web = dt
		}
	}
	wantLabels := map[string]string{"tier": "from-workload", "purpose": "web", "workload": "shop", "workspace": "shop-team"}
	if !maps.Equal(web.Labels, wantLabels) {
		t.Errorf("labels = %v, want %v", web.Labels, wantLabels)
	}
	if web.Workload != "shop" || web.Workspace != "shop-team" || web.Registration != "" || web.Environment != "dev" {
		t.Errorf("target = %+v", web)
	}
	if web.Manifests["extra"] != "x" || web.Manifests["path"] != "./web" {
		t.Errorf("manifests = %v", web.Manifests)
	}
	var schemas []string
	for _, s := range web.ConfigSchemas {
		schemas = append(schemas, s.Text+"@"+s.Path)
	}
	equal(t, "schemas", schemas, []string{`{"title":"target"}@spec.deploymentTargets[0].configSchemas[0]`, `{"title":"workload"}@spec.configSchemas[0]`})
	if got := web.Source.LineOf(web.Path); got != 11 {
		t.Errorf("target line = %d, want 11", got)
	}
	if got := web.Source.LineOf(web.ConfigSchemas[0].Path); got != 15 {
		t.Errorf("target schema line = %d, want 15", got)
	}
	if len(snap.Workloads) != 1 || snap.Workloads[0].Workspace != "shop-team" {
		t.Errorf("workloads = %+v", snap.Workloads)
	}
}

// TestSourceLineOf: every field is located by its key's line, list items by their dash,
// unknown paths by their closest known parent, and everything else by the document's line.
func TestSourceLineOf(t *testing.T) {
	t.Parallel()
	snap := loadFolder(t, map[string]string{"p.yaml": "# policy\n---\n" + kindDoc("SchedulingPolicy", "p", // doc on lines 3-6
		"spec:\n"+ // 7
			"  deploymentTargetSelector:\n"+ // 8
			"    workspace: team\n"+ // 9
			"    labelSelector:\n"+ // 10
			"      matchExpressions:\n"+ // 11
			"        - key: size\n"+ // 12
			"          operator: In\n"+ // 13
			"          values: [large]\n"+ // 14
			"  clusterTypeSelector:\n"+ // 15
			"    labelSelector: {}\n")}) // 16
	requireNoDiags(t, snap)
	if len(snap.SchedulingPolicies) != 1 {
		t.Fatalf("policies = %d", len(snap.SchedulingPolicies))
	}
	src := snap.SchedulingPolicies[0].Source
	for path, line := range map[string]int{
		"":               3,
		"kind":           4,
		"metadata":       5,
		"metadata.name":  6,
		"metadata.other": 5,
		"spec":           7,
		"spec.deploymentTargetSelector.workspace":                                   9,
		"spec.deploymentTargetSelector.labelSelector.matchExpressions":              11,
		"spec.deploymentTargetSelector.labelSelector.matchExpressions[0]":           12,
		"spec.deploymentTargetSelector.labelSelector.matchExpressions[0].operator":  13,
		"spec.deploymentTargetSelector.labelSelector.matchExpressions[0].values[0]": 14,
		"spec.deploymentTargetSelector.labelSelector.matchExpressions[3].operator":  11,
		"spec.clusterTypeSelector.labelSelector":                                    16,
		"spec.clusterTypeSelector.labelSelector.matchLabels":                        16,
	} {
		if got := src.LineOf(path); got != line {
			t.Errorf("LineOf(%q) = %d, want %d", path, got, line)
		}
	}
	if src.File != "p.yaml" || src.Line != 3 {
		t.Errorf("source = %s:%d, want p.yaml:3", src.File, src.Line)
	}
	if !slices.Equal(loaded(snap), []string{"SchedulingPolicy/p"}) {
		t.Errorf("loaded = %v", loaded(snap))
	}
}
