package compose_test

import (
	"testing"

	"github.com/fleetform/fleetform/api/v1alpha1"
	"github.com/fleetform/fleetform/internal/compose"
	"github.com/fleetform/fleetform/internal/controlplane"
)

// clusterType builds a cluster type in memory.
func clusterType(name string, labels map[string]string) *controlplane.ClusterType {
	return &controlplane.ClusterType{ClusterType: &v1alpha1.ClusterType{
		TypeMeta: v1alpha1.TypeMeta{APIVersion: v1alpha1.APIVersion, Kind: v1alpha1.KindClusterType},
		Metadata: v1alpha1.ObjectMeta{Name: name, Labels: labels},
	}}
}

// large and prometheus are the pair of reference section 3.2.
func large() *controlplane.ClusterType {
	return clusterType("large", map[string]string{"region": "west-us", "size": "large"})
}

func prometheus() *controlplane.DeploymentTarget {
	return &controlplane.DeploymentTarget{
		Name:        "observability-prometheus",
		Labels:      map[string]string{"workload": "observability", "workspace": "platform-team", "stack": "observability"},
		Environment: "dev", Workload: "observability", Workspace: "platform-team",
	}
}

func TestApplies(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		labels map[string]string
		want   bool
	}{
		// The eight results verified against Kalypso (reference 3.2).
		{name: "no labels", labels: map[string]string{}, want: true},
		{name: "cluster type label", labels: map[string]string{"region": "west-us"}, want: true},
		{name: "other region", labels: map[string]string{"region": "east-us"}, want: false},
		{name: "other cluster type", labels: map[string]string{"cluster-type": "small"}, want: false},
		{name: "target label", labels: map[string]string{"workspace": "platform-team"}, want: true},
		{name: "one label from each side", labels: map[string]string{"stack": "observability", "size": "large"}, want: true},
		{name: "one label fails", labels: map[string]string{"region": "west-us", "stack": "other"}, want: false},
		{name: "empty value matches a missing label", labels: map[string]string{"missing": ""}, want: true},

		// The named keys and the ignored ones.
		{name: "nil labels", labels: nil, want: true},
		{name: "this cluster type", labels: map[string]string{"cluster-type": "large"}, want: true},
		{name: "this target", labels: map[string]string{"deployment-target": "observability-prometheus"}, want: true},
		{name: "other target", labels: map[string]string{"deployment-target": "observability-grafana"}, want: false},
		{name: "this workload", labels: map[string]string{"workload": "observability"}, want: true},
		{name: "other workload", labels: map[string]string{"workload": "billing"}, want: false},
		{name: "cluster type name is not a label", labels: map[string]string{"cluster-type": "west-us"}, want: false},
		// Either side may hold the label: the target has no region, which reads as "".
		{name: "empty value matches a label missing on one side", labels: map[string]string{"region": ""}, want: true},
		{
			name: "ignored labels",
			labels: map[string]string{
				"platform-config": "false", "kustomize.toolkit.fluxcd.io/name": "x",
				"kustomize.toolkit.fluxcd.io/namespace": "y",
			},
			want: true,
		},
		{name: "ignored labels do not hide a failing one", labels: map[string]string{"platform-config": "true", "size": "small"}, want: false},
		{name: "all named keys together", labels: map[string]string{
			"cluster-type": "large", "deployment-target": "observability-prometheus", "workload": "observability", "region": "west-us",
		}, want: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := compose.Applies(tt.labels, large(), prometheus()); got != tt.want {
				t.Errorf("Applies(%v) = %v, want %v", tt.labels, got, tt.want)
			}
		})
	}
}

// TestAppliesMissingLabels checks how missing labels read: the workload key compares with
// the target's workload label (as Kalypso does, not with its Workload field), and an empty
// value fails when both sides have the label.
func TestAppliesMissingLabels(t *testing.T) {
	t.Parallel()
	dt := prometheus()
	dt.Labels = map[string]string{"stack": "observability"} // a DeploymentTarget written without a workload label
	if compose.Applies(map[string]string{"workload": "observability"}, large(), dt) {
		t.Error("workload=observability applied to a target without a workload label")
	}
	if !compose.Applies(map[string]string{"workload": ""}, large(), dt) {
		t.Error("workload=\"\" did not apply to a target without a workload label")
	}
	ct := clusterType("large", map[string]string{"region": "west-us", "stack": "infra"})
	if compose.Applies(map[string]string{"stack": ""}, ct, dt) {
		t.Error(`stack="" applied although both sides have a stack label`)
	}
}
