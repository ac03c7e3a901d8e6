package hub

import (
	"testing"
	"time"
)

func TestDiffWorkloadExpectedDifferences(t *testing.T) {
	view := func(cfg map[string][]any) *workloadView {
		return &workloadView{side: WorkloadSide{DeploymentTargets: []string{"t"}, ClusterTypes: []string{"ct"}, Versions: map[string]string{}}, config: cfg}
	}
	d := diffWorkload("stage", "prod", "shop",
		view(map[string][]any{"ENVIRONMENT": {"stage"}, "HOST": {"db.stage.internal"}, "REPLICAS": {2}}),
		view(map[string][]any{"ENVIRONMENT": {"prod"}, "HOST": {"db.prod.internal"}, "REPLICAS": {2}}))
	if !d.Same || len(d.Config) != 2 || !d.Config[0].Expected || !d.Config[1].Expected {
		t.Fatalf("differences by the environment's name only: %+v", d)
	}
	d = diffWorkload("stage", "prod", "shop",
		view(map[string][]any{"ENVIRONMENT": {"stage"}, "REPLICAS": {2}}),
		view(map[string][]any{"ENVIRONMENT": {"prod"}, "REPLICAS": {5}}))
	if d.Same || len(d.Config) != 2 || d.Config[1].Key != "REPLICAS" || d.Config[1].Expected {
		t.Fatalf("a real difference: %+v", d)
	}
	d = diffWorkload("stage", "prod", "shop", view(map[string][]any{"NAME": {"stage-x"}}), view(map[string][]any{"NAME": {"other"}}))
	if d.Same || d.Config[0].Expected {
		t.Fatalf("a value that is not the renamed one: %+v", d)
	}
}

func TestReachAndSummaries(t *testing.T) {
	r := Reach([]TargetRollout{
		{Workload: "shop", DeploymentTarget: "a", ClusterType: "small", Clusters: 10, Compliant: 8, Failed: 2},
		{Workload: "shop", DeploymentTarget: "b", ClusterType: "small", Clusters: 10, Compliant: 6, Progressing: 4},
		{Workload: "shop", DeploymentTarget: "a", ClusterType: "large", Clusters: 5, Compliant: 5},
	})
	if r.ShouldReach != 15 || r.Has != 11 || r.Progressing != 4 || r.Failed != 0 {
		t.Fatalf("reach %+v: the target furthest behind speaks for a shared cluster type", r)
	}
	now := time.Now()
	s := SummariseHistory([]Event{
		{Time: now, Kind: EventDeployment, Environment: "dev", Revision: "r2", To: "Ready"},
		{Time: now.Add(-time.Second), Kind: EventDeployment, Environment: "dev", Revision: "r2", To: "Failed"},
		{Time: now.Add(-time.Second), Kind: EventDeployment, Environment: "dev", Revision: "r2", To: "Ready"},
		{Time: now.Add(-time.Hour), Kind: EventPromotion, Environment: "prod", Revision: "c1", Message: "promoted c1 to prod"},
	})
	if len(s) != 2 || s[0].Revision != "r2" || s[0].Events != 3 || s[0].To["Ready"] != 2 || s[0].To["Failed"] != 1 ||
		s[1].Message != "promoted c1 to prod" || !s[0].First.Equal(now.Add(-time.Second)) {
		t.Fatalf("summaries %+v", s)
	}
}
