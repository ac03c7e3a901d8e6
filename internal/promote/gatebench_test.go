package promote_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/fleetform/fleetform/internal/hub"
	"github.com/fleetform/fleetform/internal/promote"
	"github.com/fleetform/fleetform/internal/testutil/storetest"
)

// checkGates is what `fleetform promote` does against the hub for a source environment.
func checkGates(ctx context.Context, h promote.Hub, commit string) ([]string, error) {
	src, err := h.Source(ctx, "dev")
	if err != nil {
		return nil, err
	}
	g := promote.Gates{Environment: "stage", From: "dev", MinCompliantPercent: 100, Soak: time.Minute}
	return promote.Check(g, promote.Evidence{Commit: commit, SourcePin: commit, SourceGitOpsCommit: commit,
		Rollout: &src.Rollout, DesiredCommit: src.DesiredCommit, DesiredPostedAt: src.DesiredPostedAt,
		LastChange: src.LastChange, Now: time.Now().Add(time.Hour)}), nil
}

func TestGateCheckOnSeededFleet(t *testing.T) {
	h := storetest.RunningHub(t, hub.Options{})
	f := storetest.Fleet{Environment: "dev", ClusterTypes: 3, PerType: 4, Targets: 2, Revision: "r1", PromotedCommit: "c1"}
	if err := f.Seed(t.Context(), h); err != nil {
		t.Fatal(err)
	}
	reasons, err := checkGates(t.Context(), promote.LocalHub{Hub: h}, "c1")
	if err != nil || len(reasons) != 0 {
		t.Fatalf("all 12 clusters compliant: reasons %q, err %v", reasons, err)
	}
	failing := hub.Report{Cluster: f.ClusterName(1, 2), Revision: "r1", Status: hub.NonCompliant, ObservedAt: time.Now().Add(time.Minute)}
	if err := h.Report(t.Context(), hub.Principal{Kind: hub.TokenCluster, Cluster: failing.Cluster}, failing); err != nil {
		t.Fatal(err)
	}
	reasons, err = checkGates(t.Context(), promote.LocalHub{Hub: h}, "c1")
	if err != nil || len(reasons) != 1 || !strings.Contains(reasons[0], "3 of 4 clusters compliant") {
		t.Fatalf("one cluster of ct-001 failing: reasons %q, err %v", reasons, err)
	}
}

// BenchmarkGateCheck is issue 5's bar: checking the gates of an environment of 100,000
// clusters (100 cluster types × 1,000 clusters, 10 deployment targets each) ≤ 1 s.
func BenchmarkGateCheck(b *testing.B) {
	h := storetest.RunningHub(b, hub.Options{})
	f := storetest.Fleet{Environment: "dev", ClusterTypes: 100, PerType: 1000, Targets: 10, Revision: "r1", PromotedCommit: "c1"}
	start := time.Now()
	if err := f.Seed(b.Context(), h); err != nil {
		b.Fatal(err)
	}
	b.Logf("seeded %d clusters in %s", f.ClusterTypes*f.PerType, time.Since(start).Round(time.Millisecond))
	for b.Loop() {
		reasons, err := checkGates(b.Context(), promote.LocalHub{Hub: h}, "c1")
		if err != nil || len(reasons) != 0 {
			b.Fatalf("reasons %q, err %v", reasons, err)
		}
	}
}
