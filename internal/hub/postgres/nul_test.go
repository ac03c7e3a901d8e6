package postgres_test

import (
	"context"
	"testing"
	"time"

	"github.com/fleetform/fleetform/internal/hub"
	"github.com/fleetform/fleetform/internal/testutil/pgtest"
	"github.com/fleetform/fleetform/internal/testutil/storetest"
)

// TestNUL: PostgreSQL text cannot hold NUL, which JSON can carry. A report with one is stored
// (with U+FFFD) and does not fail the reports committed with it.
func TestNUL(t *testing.T) {
	t.Parallel()
	h := hub.New(open(t, pgtest.NewDatabase(t)), hub.Options{MaxBatch: 64})
	storetest.RunHub(t, h)
	ctx := context.Background()
	for _, name := range []string{"a", "b"} {
		if _, err := h.RegisterCluster(ctx, hub.Cluster{Name: name, Environment: "dev", ClusterType: "x",
			Labels: map[string]string{"site\x00": "x\x00y"}}, false); err != nil {
			t.Fatal(err)
		}
	}
	if err := h.PostDesired(ctx, hub.Desired{Environment: "dev", Revision: "r\x001", Assignments: []hub.DesiredAssignment{{
		Workload: "w", DeploymentTarget: "t\x00", ClusterType: "x", Manifests: map[string]string{"path": "\x00"},
		Config: map[string]any{"K\x00": []any{"v\x00", 1.5}}}}}); err != nil {
		t.Fatal(err)
	}
	errs := make(chan error, 2)
	for _, r := range []hub.Report{
		{Cluster: "a", Revision: "r\x001", Status: hub.Compliant, Message: "bad\x00byte",
			Deployments: []hub.DeploymentReport{{DeploymentTarget: "t\x00", Namespace: "n\x00", Status: hub.Ready, Revision: "v\x00"}}},
		{Cluster: "b", Revision: "r\x001", Status: hub.Compliant, Message: "fine"},
	} {
		r.ObservedAt = time.Now()
		go func() { errs <- h.Report(ctx, hub.Principal{Kind: hub.TokenCluster, Cluster: r.Cluster}, r) }()
	}
	for range 2 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	a, err := h.Cluster(ctx, "a")
	if err != nil || a.Message != "bad\uFFFDbyte" || a.Labels["site\uFFFD"] != "x\uFFFDy" || len(a.Deployments) != 1 ||
		a.Deployments[0].Namespace != "n\uFFFD" {
		t.Fatalf("cluster a: %+v, %v", a, err)
	}
	r, err := h.Rollout(ctx, "dev")
	if err != nil || r.Revision != "r\uFFFD1" || len(r.Targets) != 1 || r.Targets[0].Compliant != 2 {
		t.Fatalf("rollout %+v, %v", r, err)
	}
	// A second report of a cluster whose stored revision was cleaned, with two targets that
	// differ only by NUL against U+FFFD: the old and new revision are one counter row and the
	// targets one deployment row once stored; the report is stored, not failed (a statement
	// must not write a row twice).
	twins := hub.Report{Cluster: "b", Revision: "r\x001", Status: hub.Compliant, ObservedAt: time.Now(),
		Deployments: []hub.DeploymentReport{{DeploymentTarget: "u\x00", Status: hub.Ready}, {DeploymentTarget: "u\uFFFD", Status: hub.Failed}}}
	if err := h.Report(ctx, hub.Principal{Kind: hub.TokenCluster, Cluster: "b"}, twins); err != nil {
		t.Fatalf("a report with targets u\\x00 and u\\uFFFD: %v", err)
	}
}

// TestNULInServeState: a source's or a sync's texts with NUL (a git error's output) are stored
// with U+FFFD instead of failing.
func TestNULInServeState(t *testing.T) {
	t.Parallel()
	h := hub.New(open(t, pgtest.NewDatabase(t)), hub.Options{SweepEvery: -1})
	ctx := context.Background()
	if err := h.PutSource(ctx, hub.SourceState{URL: "https://example.com/a", Kind: hub.SourceKindWorkload, LastError: "bad\x00byte"}); err != nil {
		t.Fatal(err)
	}
	if err := h.RecordSync(ctx, hub.SyncRecord{Environment: "dev", Error: "bad\x00byte",
		Failed: []hub.FailedAssignment{{ClusterType: "x", DeploymentTarget: "t\x00", Error: "e\x00"}}}); err != nil {
		t.Fatal(err)
	}
	sources, err := h.Sources(ctx)
	if err != nil || len(sources) != 1 || sources[0].LastError != "bad\uFFFDbyte" {
		t.Errorf("sources %+v, %v; want the error with U+FFFD", sources, err)
	}
	r, err := h.LatestSync(ctx, "dev")
	if err != nil || r.Error != "bad\uFFFDbyte" || len(r.Failed) != 1 || r.Failed[0].DeploymentTarget != "t\uFFFD" || r.Failed[0].Error != "e\uFFFD" {
		t.Errorf("latest sync %+v, %v; want the texts with U+FFFD", r, err)
	}
}
