package compose_test

import (
	"fmt"
	"maps"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fleetform/fleetform/internal/compose"
	"github.com/fleetform/fleetform/internal/controlplane"
	"github.com/fleetform/fleetform/internal/testutil/gittest"
)

// withFiles returns base plus extra files (extra wins).
func withFiles(base map[string]string, extra map[string]string) map[string]string {
	out := maps.Clone(base)
	maps.Copy(out, extra)
	return out
}

func TestComposeKalypsoDev(t *testing.T) {
	t.Parallel()
	const (
		devConfig  = "environments/dev/configs/dev-config.yaml"
		westConfig = "environments/dev/cluster-types/west-us/west-us-config.yaml"
		largeCfg   = "environments/dev/cluster-types/west-us/large/large-config.yaml"
	)
	cm := func(name, file string, line int, level string) compose.Source {
		return compose.Source{Kind: "ConfigMap", Name: name, File: file, Line: line, Level: level}
	}
	// Reference 4.4 for the values; the lines are those of the keys in the fixture files.
	want := map[string]*compose.Value{
		"CLUSTER_NAME":                     {Value: "Large", Source: cm("large-config", largeCfg, 9, "cluster-type"), Shadowed: []compose.Shadowed{}},
		"DATABASE_URL":                     {Value: "mysql://west:8806/mysql2", Source: cm("west-us-config", westConfig, 10, "labels"), Shadowed: []compose.Shadowed{}},
		"ENVIRONMENT":                      {Value: "Dev", Source: cm("dev-config", devConfig, 8, "environment"), Shadowed: []compose.Shadowed{}},
		"REGION":                           {Value: "West US", Source: cm("west-us-config", westConfig, 9, "labels"), Shadowed: []compose.Shadowed{}},
		"SOME_COMMON_ENVIRONMENT_VARIABLE": {Value: "false", Source: cm("dev-config", devConfig, 9, "environment"), Shadowed: []compose.Shadowed{}},
	}
	wantData := map[string]any{}
	for k, v := range want {
		wantData[k] = v.Value
	}
	for _, mode := range []string{"layered", "name"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			snap := loadDev(t, withFiles(kalypsoDev, map[string]string{"environments/dev/environment.yaml": environment(mode)}))
			ct, dt := pair(t, snap, "large", "observability-prometheus")
			cfg := compose.New(snap).Compose(ct, dt)
			if diff := cmp.Diff(wantData, cfg.Data); diff != "" {
				t.Errorf("Data mismatch (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(want, cfg.Values); diff != "" {
				t.Errorf("Values mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// TestComposeKalypsoDevOtherTypes checks the other cluster types of the fixture: the
// restricted DATABASE_URL, the east region and each type's own CLUSTER_NAME.
func TestComposeKalypsoDevOtherTypes(t *testing.T) {
	t.Parallel()
	snap := loadDev(t, kalypsoDev)
	c := compose.New(snap)
	common := map[string]any{"ENVIRONMENT": "Dev", "SOME_COMMON_ENVIRONMENT_VARIABLE": "false"}
	tests := []struct {
		clusterType string
		want        map[string]any
	}{
		{"small", map[string]any{"CLUSTER_NAME": "Small", "REGION": "West US", "DATABASE_URL": "mysql://west:8806/mysql2"}},
		{"drone", map[string]any{"CLUSTER_NAME": "Drone", "REGION": "East US", "DATABASE_URL": "mysql://restricted-host:3306/mysqlrty123"}},
		{"command-center", map[string]any{"CLUSTER_NAME": "Command Center", "REGION": "East US", "DATABASE_URL": "mysql://restricted-host:3306/mysqlrty123"}},
	}
	for _, tt := range tests {
		ct, dt := pair(t, snap, tt.clusterType, "observability-prometheus")
		want := withAny(common, tt.want)
		if diff := cmp.Diff(want, c.Compose(ct, dt).Data); diff != "" {
			t.Errorf("%s: Data mismatch (-want +got):\n%s", tt.clusterType, diff)
		}
	}
}

func withAny(base, extra map[string]any) map[string]any {
	out := maps.Clone(base)
	maps.Copy(out, extra)
	return out
}

// conflictCMs are ConfigMaps where every precedence level sets some of the same keys.
// The ConfigMap names are chosen so that name order and level order disagree.
const conflictCMs = `apiVersion: v1
kind: ConfigMap
metadata:
  name: a-large
  labels:
    platform-config: "true"
    cluster-type: large
data:
  KEY: from-cluster-type
  WL: from-cluster-type
  DT: from-cluster-type
  RESOURCES: |
    limits: {cpu: "2"}
    sidecars:
      - name: log
        image: log:2
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: m-env
  labels:
    platform-config: "true"
data:
  KEY: from-env
  RESOURCES: |
    limits: {cpu: "1", memory: 1Gi}
    sidecars:
      - name: log
        image: log:1
      - name: trace
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: z-west
  labels:
    platform-config: "true"
    region: west-us
data:
  KEY: from-region
  RESOURCES: |
    limits: {memory: 2Gi}
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: 0-target
  labels:
    platform-config: "true"
    deployment-target: observability-prometheus
data:
  DT: from-target
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: 1-workload
  labels:
    platform-config: "true"
    workload: observability
data:
  WL: from-workload
  DT: from-workload
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: b-other-workload
  labels:
    platform-config: "true"
    workload: billing
data:
  WL: from-other-workload
`

const conflictCMsFile = "environments/dev/configs/conflict.yaml"

func conflictFiles(mode string) map[string]string {
	return map[string]string{
		"environments/dev/environment.yaml": environment(mode),
		"environments/dev/large.yaml": `apiVersion: scheduler.kalypso.io/v1alpha1
kind: ClusterType
metadata:
  name: large
  labels: {region: west-us, size: large}
spec: {reconciler: arc-flux, namespaceService: default, configType: configmap}
`,
		conflictCMsFile: conflictCMs,
		"workloads/observability.yaml": `apiVersion: scheduler.kalypso.io/v1alpha1
kind: Workload
metadata:
  name: observability
  labels: {stack: observability, workspace: platform-team}
spec:
  deploymentTargets:
    - name: prometheus
      environment: dev
      manifests: {repo: "https://example.com/r", branch: dev, path: ./prometheus}
`,
	}
}

func TestComposePrecedence(t *testing.T) {
	t.Parallel()
	tests := []struct {
		mode string
		want map[string]string // key -> winning ConfigMap
	}{
		// environment < labels < cluster-type < workload < deployment-target
		{mode: "layered", want: map[string]string{"KEY": "a-large", "WL": "1-workload", "DT": "0-target"}},
		// Kalypso: the ConfigMap whose name sorts last wins, whatever it targets.
		{mode: "name", want: map[string]string{"KEY": "z-west", "WL": "a-large", "DT": "a-large"}},
	}
	for _, tt := range tests {
		t.Run(tt.mode, func(t *testing.T) {
			t.Parallel()
			snap := loadDev(t, conflictFiles(tt.mode))
			ct, dt := pair(t, snap, "large", "observability-prometheus")
			cfg := compose.New(snap).Compose(ct, dt)
			got := map[string]string{}
			for k := range tt.want {
				got[k] = cfg.Values[k].Source.Name
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("winning ConfigMaps mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// TestComposeShadowed checks the full provenance of a scalar key: the winner and every
// shadowed value, nearest first, each with its file and line.
func TestComposeShadowed(t *testing.T) {
	t.Parallel()
	src := func(name, prefix, level string) compose.Source {
		return compose.Source{Kind: "ConfigMap", Name: name, File: conflictCMsFile, Line: lineAfter(t, conflictCMs, "name: "+name, prefix), Level: level}
	}
	tests := []struct {
		mode string
		want *compose.Value
	}{
		{mode: "layered", want: &compose.Value{
			Value: "from-cluster-type", Source: src("a-large", "KEY:", "cluster-type"),
			Shadowed: []compose.Shadowed{
				{Value: "from-region", Source: src("z-west", "KEY:", "labels")},
				{Value: "from-env", Source: src("m-env", "KEY:", "environment")},
			},
		}},
		{mode: "name", want: &compose.Value{
			Value: "from-region", Source: src("z-west", "KEY:", "labels"),
			Shadowed: []compose.Shadowed{
				{Value: "from-env", Source: src("m-env", "KEY:", "environment")},
				{Value: "from-cluster-type", Source: src("a-large", "KEY:", "cluster-type")},
			},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.mode, func(t *testing.T) {
			t.Parallel()
			snap := loadDev(t, conflictFiles(tt.mode))
			ct, dt := pair(t, snap, "large", "observability-prometheus")
			got := compose.New(snap).Compose(ct, dt).Values["KEY"]
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("KEY mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// TestComposeStructured checks that structured values merge across levels (maps by key,
// lists by item name) and that each shadowed entry shows the value its own source set.
func TestComposeStructured(t *testing.T) {
	t.Parallel()
	snap := loadDev(t, conflictFiles("layered"))
	ct, dt := pair(t, snap, "large", "observability-prometheus")
	got := compose.New(snap).Compose(ct, dt).Values["RESOURCES"]
	want := map[string]any{
		"limits": map[string]any{"cpu": "2", "memory": "2Gi"},
		"sidecars": []any{
			map[string]any{"name": "log", "image": "log:2"},
			map[string]any{"name": "trace"},
		},
	}
	if diff := cmp.Diff(want, got.Value); diff != "" {
		t.Errorf("RESOURCES mismatch (-want +got):\n%s", diff)
	}
	if got.Source.Name != "a-large" {
		t.Errorf("RESOURCES source = %s, want a-large (the nearest)", got.Source.Name)
	}
	wantShadowed := []any{
		map[string]any{"limits": map[string]any{"memory": "2Gi"}}, // z-west's own value
		map[string]any{"limits": map[string]any{"cpu": "1", "memory": "1Gi"}, "sidecars": []any{
			map[string]any{"name": "log", "image": "log:1"}, map[string]any{"name": "trace"},
		}}, // m-env's own value
	}
	var gotShadowed []any
	var names []string
	for _, s := range got.Shadowed {
		gotShadowed = append(gotShadowed, s.Value)
		names = append(names, s.Source.Name)
	}
	if diff := cmp.Diff([]string{"z-west", "m-env"}, names); diff != "" {
		t.Errorf("shadowed sources mismatch (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(wantShadowed, gotShadowed); diff != "" {
		t.Errorf("shadowed values mismatch (-want +got):\n%s", diff)
	}
}

// TestComposeIsRepeatable checks that composing again, with the same or a new Composer,
// gives the same config (merging never changes the ConfigMaps' parsed values), and that
// different configs get different digests.
func TestComposeIsRepeatable(t *testing.T) {
	t.Parallel()
	snap := loadDev(t, conflictFiles("layered"))
	ct, dt := pair(t, snap, "large", "observability-prometheus")
	first := compose.New(snap).Compose(ct, dt)
	c := compose.New(snap)
	for range 3 {
		got := c.Compose(ct, dt)
		if diff := cmp.Diff(first.Data, got.Data); diff != "" {
			t.Fatalf("second composition differs (-first +now):\n%s", diff)
		}
		if got.Digest != first.Digest {
			t.Fatalf("digest %d, first %d", got.Digest, first.Digest)
		}
	}
	other := clusterType("small", map[string]string{"region": "west-us", "size": "small"})
	if got := c.Compose(other, dt); got.Digest == first.Digest {
		t.Errorf("small and large have the same digest although their configs differ: %v / %v", got.Data, first.Data)
	}
}

// lineAfter returns the line of the first line starting with prefix after the first line
// starting with anchor.
func lineAfter(t *testing.T, text, anchor, prefix string) int {
	t.Helper()
	start := lineOf(t, text, anchor)
	rest := text
	for range start {
		_, rest, _ = strings.Cut(rest, "\n")
	}
	return start + lineOf(t, rest, prefix)
}

// TestComposeKalypsoRepositories composes from Kalypso's sample repositories rebuilt in the
// Kalypso layout (branch per environment, workload from its registration), so that the
// provenance is that of the original files.
func TestComposeKalypsoRepositories(t *testing.T) {
	t.Parallel()
	k := gittest.NewKalypso(t)
	cp, err := controlplane.Open(t.Context(), k.ControlPlane.Dir, controlplane.Options{RepoMap: k.RepoMap})
	if err != nil {
		t.Fatal(err)
	}
	snap, err := cp.Load(t.Context(), "dev")
	if err != nil {
		t.Fatal(err)
	}
	ct, dt := pair(t, snap, "large", "observability-prometheus")
	cfg := compose.New(snap).Compose(ct, dt)
	got := map[string]string{}
	for k, v := range cfg.Values {
		got[k] = fmt.Sprintf("%v @ %s:%d", v.Value, v.Source.File, v.Source.Line)
	}
	want := map[string]string{
		"CLUSTER_NAME":                     "Large @ cluster-types/west-us/large/large-config.yaml:9",
		"DATABASE_URL":                     "mysql://west:8806/mysql2 @ cluster-types/west-us/west-us-config.yaml:10",
		"ENVIRONMENT":                      "Dev @ configs/dev-config.yaml:8",
		"REGION":                           "West US @ cluster-types/west-us/west-us-config.yaml:9",
		"SOME_COMMON_ENVIRONMENT_VARIABLE": "false @ configs/dev-config.yaml:9",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("values mismatch (-want +got):\n%s", diff)
	}
}
