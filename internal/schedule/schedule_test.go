package schedule_test

import (
	"flag"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fleetform/fleetform/api/v1alpha1"
	"github.com/fleetform/fleetform/internal/controlplane"
	"github.com/fleetform/fleetform/internal/schedule"
	"github.com/fleetform/fleetform/internal/testutil/golden"
)

var update = flag.Bool("update", false, "rewrite golden files")

func ct(name string, labels map[string]string) *controlplane.ClusterType {
	return &controlplane.ClusterType{ClusterType: &v1alpha1.ClusterType{Metadata: v1alpha1.ObjectMeta{Name: name, Labels: labels}}}
}

func dt(name, env, workspace string, labels map[string]string) *controlplane.DeploymentTarget {
	l := map[string]string{"workload": strings.Split(name, "-")[0], "workspace": workspace}
	for k, v := range labels {
		l[k] = v
	}
	return &controlplane.DeploymentTarget{Name: name, Environment: env, Labels: l, Workload: l["workload"], Workspace: workspace}
}

func policy(name, workspace string, target, types *v1alpha1.LabelSelector) *controlplane.SchedulingPolicy {
	p := &v1alpha1.SchedulingPolicy{Metadata: v1alpha1.ObjectMeta{Name: name}}
	p.Spec.DeploymentTargetSelector.Workspace = workspace
	p.Spec.DeploymentTargetSelector.LabelSelector = target
	p.Spec.ClusterTypeSelector.LabelSelector = types
	return &controlplane.SchedulingPolicy{SchedulingPolicy: p}
}

func match(kv ...string) *v1alpha1.LabelSelector {
	s := &v1alpha1.LabelSelector{MatchLabels: map[string]string{}}
	for i := 0; i+1 < len(kv); i += 2 {
		s.MatchLabels[kv[i]] = kv[i+1]
	}
	return s
}

func expr(key, op string, values ...string) *v1alpha1.LabelSelector {
	return &v1alpha1.LabelSelector{MatchExpressions: []v1alpha1.LabelSelectorRequirement{{Key: key, Operator: op, Values: values}}}
}

// fleet is a small environment used by most cases.
func fleet(policies ...*controlplane.SchedulingPolicy) *controlplane.Snapshot {
	return &controlplane.Snapshot{
		Environment: "dev",
		ClusterTypes: []*controlplane.ClusterType{
			ct("small", map[string]string{"size": "small", "region": "west"}),
			ct("large", map[string]string{"size": "large", "region": "west"}),
			ct("drone", map[string]string{"size": "small", "region": "east", "edge": "true"}),
		},
		DeploymentTargets: []*controlplane.DeploymentTarget{
			dt("obs-prometheus", "dev", "platform", map[string]string{"stack": "observability"}),
			dt("obs-grafana", "dev", "platform", map[string]string{"stack": "observability"}),
			dt("app-functional", "dev", "apps", map[string]string{"purpose": "test", "edge": "true"}),
			dt("app-uat", "stage", "apps", map[string]string{"purpose": "uat"}),
		},
		SchedulingPolicies: policies,
	}
}

type pair struct {
	CT, DT   string
	Policies []string
}

func pairs(r *schedule.Result) []pair {
	out := []pair{}
	for _, a := range r.Assignments {
		out = append(out, pair{a.ClusterType, a.DeploymentTarget, a.Policies})
	}
	return out
}

func TestSchedule(t *testing.T) {
	tests := []struct {
		name       string
		policies   []*controlplane.SchedulingPolicy
		want       []pair
		wantErrors []string // substrings of diagnostics, in order
	}{
		{
			name:     "no policy, no assignment",
			policies: nil,
			want:     []pair{},
		},
		{
			name:     "matchLabels on both sides, sorted by cluster type then target",
			policies: []*controlplane.SchedulingPolicy{policy("obs", "platform", match("stack", "observability"), match("size", "large"))},
			want:     []pair{{"large", "obs-grafana", []string{"obs"}}, {"large", "obs-prometheus", []string{"obs"}}},
		},
		{
			name:     "empty selectors select everything in the environment only",
			policies: []*controlplane.SchedulingPolicy{policy("all", "", &v1alpha1.LabelSelector{}, &v1alpha1.LabelSelector{})},
			want: []pair{
				{"drone", "app-functional", []string{"all"}}, {"drone", "obs-grafana", []string{"all"}}, {"drone", "obs-prometheus", []string{"all"}},
				{"large", "app-functional", []string{"all"}}, {"large", "obs-grafana", []string{"all"}}, {"large", "obs-prometheus", []string{"all"}},
				{"small", "app-functional", []string{"all"}}, {"small", "obs-grafana", []string{"all"}}, {"small", "obs-prometheus", []string{"all"}},
			},
		},
		{
			name:     "workspace filter",
			policies: []*controlplane.SchedulingPolicy{policy("apps", "apps", &v1alpha1.LabelSelector{}, match("edge", "true"))},
			want:     []pair{{"drone", "app-functional", []string{"apps"}}},
		},
		{
			name: "pair selected by two policies is one assignment listing both",
			policies: []*controlplane.SchedulingPolicy{
				policy("b-west", "", match("stack", "observability"), match("region", "west")),
				policy("a-large", "", match("workload", "obs"), match("size", "large")),
			},
			want: []pair{
				{"large", "obs-grafana", []string{"a-large", "b-west"}}, {"large", "obs-prometheus", []string{"a-large", "b-west"}},
				{"small", "obs-grafana", []string{"b-west"}}, {"small", "obs-prometheus", []string{"b-west"}},
			},
		},
		{
			name: "matchExpressions In, NotIn, Exists, DoesNotExist",
			policies: []*controlplane.SchedulingPolicy{
				policy("in", "", expr("stack", "In", "observability", "logging"), expr("region", "In", "east")),
				policy("notin", "", expr("purpose", "NotIn", "test"), expr("size", "NotIn", "small")),
				policy("exists", "", expr("purpose", "Exists"), expr("edge", "Exists")),
				policy("absent", "", expr("edge", "DoesNotExist"), expr("edge", "DoesNotExist")),
			},
			want: []pair{
				{"drone", "app-functional", []string{"exists"}},
				{"drone", "obs-grafana", []string{"in"}}, {"drone", "obs-prometheus", []string{"in"}},
				{"large", "obs-grafana", []string{"absent", "notin"}}, {"large", "obs-prometheus", []string{"absent", "notin"}},
				{"small", "obs-grafana", []string{"absent"}}, {"small", "obs-prometheus", []string{"absent"}},
			},
		},
		{
			name: "an invalid policy is reported and selects nothing; the others still schedule",
			policies: []*controlplane.SchedulingPolicy{
				policy("broken", "", expr("stack", "Equals", "x"), &v1alpha1.LabelSelector{}),
				policy("missing", "", nil, &v1alpha1.LabelSelector{}),
				policy("obs", "", match("stack", "observability"), match("size", "large")),
			},
			want: []pair{{"large", "obs-grafana", []string{"obs"}}, {"large", "obs-prometheus", []string{"obs"}}},
			wantErrors: []string{
				`spec.deploymentTargetSelector.labelSelector.matchExpressions[0].operator: invalid selector: "Equals" is not a valid operator`,
				"spec.deploymentTargetSelector.labelSelector: labelSelector is required",
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := schedule.Schedule(fleet(tt.policies...))
			if diff := cmp.Diff(tt.want, pairs(r)); diff != "" {
				t.Errorf("assignments (-want +got):\n%s", diff)
			}
			errs := errorsOf(r.Diagnostics) // the warnings about unscheduled targets: TestLandsNowhere
			if len(errs) != len(tt.wantErrors) {
				t.Fatalf("errors = %v, want %d", errs, len(tt.wantErrors))
			}
			for i, d := range errs {
				if !strings.Contains(d.Error(), tt.wantErrors[i]) {
					t.Errorf("diagnostic %d = %q, want it to contain %q", i, d.Error(), tt.wantErrors[i])
				}
			}
		})
	}
}

func TestFailedPoliciesAreRecorded(t *testing.T) {
	r := schedule.Schedule(fleet(policy("broken", "", expr("k", "In"), &v1alpha1.LabelSelector{})))
	if diff := cmp.Diff([]string{"broken"}, r.FailedPolicies); diff != "" {
		t.Errorf("FailedPolicies (-want +got):\n%s", diff)
	}
}

func TestNamespace(t *testing.T) {
	long := strings.Repeat("x", 40)
	tests := []struct {
		env, ct, dt string
		want        string
	}{
		{"dev", "large", "observability-prometheus", "dev-large-observability-prometheus"},
		{"dev", "edge.eu", "app", "dev-edge-eu-app-"},                                   // dots are not valid: sanitized and hashed
		{"dev", long, long, "dev-" + long + "-" + long[:9] + "-"},                       // too long: cut and hashed
		{"dev", "a", strings.Repeat("b", 57), "dev-a-" + strings.Repeat("b", 57)},       // 63 characters: as it is
		{"dev", "a", strings.Repeat("b", 58), "dev-a-" + strings.Repeat("b", 48) + "-"}, // 64: cut and hashed
		{"dev", "Large", "web", "dev-large-web-"},                                       // capitals: lowered and hashed
	}
	seen := map[string]bool{}
	for _, tt := range tests {
		got := schedule.Namespace(tt.env, tt.ct, tt.dt)
		if !strings.HasPrefix(got, tt.want) {
			t.Errorf("Namespace(%q, %q, %q) = %q, want prefix %q", tt.env, tt.ct, tt.dt, got, tt.want)
		}
		if len(got) > 63 {
			t.Errorf("Namespace(%q, %q, %q) = %q is longer than 63", tt.env, tt.ct, tt.dt, got)
		}
		if exact := !strings.HasSuffix(tt.want, "-"); exact && got != tt.want {
			t.Errorf("Namespace(%q, %q, %q) = %q, want %q", tt.env, tt.ct, tt.dt, got, tt.want)
		}
		if exact := !strings.HasSuffix(tt.want, "-"); !exact && len(got) != len(tt.want)+8 {
			t.Errorf("Namespace(%q, %q, %q) = %q, want %q and 8 hex digits", tt.env, tt.ct, tt.dt, got, tt.want)
		}
		if got != schedule.Namespace(tt.env, tt.ct, tt.dt) {
			t.Errorf("Namespace is not deterministic for %q", got)
		}
		seen[got] = true
	}
	a, b := schedule.Namespace("dev", long, long+"a"), schedule.Namespace("dev", long, long+"b")
	if a == b {
		t.Errorf("distinct long names collide: %q", a)
	}
	if schedule.Namespace("dev", "a.b", "c") == schedule.Namespace("dev", "a-b", "c") {
		t.Error("a sanitized name collides with the valid name it resembles")
	}
}

func TestExplain(t *testing.T) {
	r := schedule.Schedule(fleet(
		policy("obs", "platform", match("stack", "observability"), match("size", "large")),
		policy("apps", "apps", &v1alpha1.LabelSelector{}, match("edge", "true")),
	))
	got := map[string]schedule.Explanation{
		"scheduled":            r.Explain("obs-grafana", "large"),
		"wrong cluster type":   r.Explain("obs-grafana", "small"),
		"wrong workspace":      r.Explain("app-functional", "large"),
		"other environment":    r.Explain("app-uat", "large"),
		"unknown cluster type": r.Explain("obs-grafana", "nope"),
	}
	golden.JSON(t, filepath.Join("testdata", "explain.json"), got, *update)
}

// TestGoldenKalypsoLikeFleet schedules a small fleet and compares the full result.
func TestGoldenSchedule(t *testing.T) {
	r := schedule.Schedule(fleet(
		policy("obs", "platform", match("stack", "observability"), expr("size", "In", "large", "small")),
		policy("edge-tests", "apps", expr("purpose", "In", "test"), match("edge", "true")),
	))
	type row struct {
		Workload, DeploymentTarget, ClusterType, Namespace string
		Policies                                           []string
	}
	var rows []row
	for _, a := range r.Assignments {
		rows = append(rows, row{a.Workload, a.DeploymentTarget, a.ClusterType, a.Namespace, a.Policies})
	}
	golden.JSON(t, filepath.Join("testdata", "schedule.json"), rows, *update)
}

func errorsOf(ds []controlplane.Diagnostic) []controlplane.Diagnostic {
	var out []controlplane.Diagnostic
	for _, d := range ds {
		if d.Severity == controlplane.SeverityError {
			out = append(out, d)
		}
	}
	return out
}

// TestLandsNowhere: a deployment target no assignment holds is a warning that says why (no
// policy selects it, or the policies that do match no cluster type), and so is a target of
// an environment that is not declared. With an invalid policy, what it selects is unknown.
func TestLandsNowhere(t *testing.T) {
	tests := []struct {
		name     string
		policies []*controlplane.SchedulingPolicy
		want     []string
	}{
		{
			name:     "selected and placed: no warning",
			policies: []*controlplane.SchedulingPolicy{policy("all", "", &v1alpha1.LabelSelector{}, &v1alpha1.LabelSelector{})},
			want:     []string{`deployment target stray-x lands nowhere: its environment "prd" is not declared (declared: dev, prod, stage)`},
		},
		{
			name:     "no policy selects it",
			policies: []*controlplane.SchedulingPolicy{policy("obs", "", match("stack", "observability"), &v1alpha1.LabelSelector{})},
			want: []string{
				"deployment target app-functional lands nowhere in dev: no scheduling policy selects it",
				`deployment target stray-x lands nowhere: its environment "prd" is not declared`,
			},
		},
		{
			name: "selected, but no cluster type matches",
			policies: []*controlplane.SchedulingPolicy{
				policy("obs", "", match("stack", "observability"), &v1alpha1.LabelSelector{}),
				policy("apps", "", match("workload", "app"), match("size", "huge")),
				policy("apps-too", "", match("workload", "app"), match("gpu", "true")),
			},
			want: []string{
				"deployment target app-functional lands nowhere in dev: apps, apps-too select it, but no cluster type matches their clusterTypeSelectors",
				`deployment target stray-x lands nowhere: its environment "prd" is not declared`,
			},
		},
		{
			name: "an invalid policy: only the undeclared environment is certain",
			policies: []*controlplane.SchedulingPolicy{
				policy("broken", "", expr("stack", "Equals", "x"), &v1alpha1.LabelSelector{}),
			},
			want: []string{`deployment target stray-x lands nowhere: its environment "prd" is not declared`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := fleet(tt.policies...)
			s.DeclaredEnvironments = []string{"dev", "prod", "stage"}
			s.DeploymentTargets = append(s.DeploymentTargets, dt("stray-x", "prd", "", nil))
			r := schedule.Schedule(s)
			var got []string
			for _, d := range r.Diagnostics {
				if d.Severity == controlplane.SeverityWarning {
					got = append(got, d.Message)
				}
			}
			if len(got) != len(tt.want) {
				t.Fatalf("warnings = %q, want %d", got, len(tt.want))
			}
			for i := range got {
				if !strings.HasPrefix(got[i], tt.want[i]) {
					t.Errorf("warning %d = %q, want %q", i, got[i], tt.want[i])
				}
			}
		})
	}
}
