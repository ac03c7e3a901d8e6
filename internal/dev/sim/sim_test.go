package sim_test

import (
	"context"
	"testing"
	"time"

	"github.com/fleetform/fleetform/internal/dev/sim"
	"github.com/fleetform/fleetform/internal/gitops"
	"github.com/fleetform/fleetform/internal/hub"
	"github.com/fleetform/fleetform/internal/testutil/gittest"
	"github.com/fleetform/fleetform/internal/testutil/storetest"
)

// inProcess adapts a hub.Hub to sim.Hub, authenticating reports with their tokens.
type inProcess struct{ h *hub.Hub }

func (p inProcess) RegisterClusters(ctx context.Context, cs []hub.Cluster) ([]string, error) {
	return p.h.RegisterClusters(ctx, cs, true)
}

func (p inProcess) Report(ctx context.Context, token string, r hub.Report) error {
	who, err := p.h.Authenticate(ctx, token)
	if err != nil {
		return err
	}
	return p.h.Report(ctx, who, r)
}

var gitopsTree = map[string]string{
	"README.md":                           "notes",
	"east/README.md":                      "east",
	"east/api-dev/reconciler.yaml":        "a",
	"east/batch-dev/reconciler.yaml":      "b",
	"west/README.md":                      "west",
	"west/api-dev/reconciler.yaml":        "a",
	".github/tracking/Promoted_Commit_Id": "c1",
}

func desired(revision string) hub.Desired {
	return hub.Desired{Environment: "dev", Revision: revision, Assignments: []hub.DesiredAssignment{
		{Workload: "api", DeploymentTarget: "api-dev", ClusterType: "east"},
		{Workload: "batch", DeploymentTarget: "batch-dev", ClusterType: "east"},
		{Workload: "api", DeploymentTarget: "api-dev", ClusterType: "west"},
	}}
}

// counts sums an environment's rollout: clusters, compliant, failed.
func counts(t *testing.T, h *hub.Hub) (revision string, clusters, compliant, failed int) {
	t.Helper()
	r, err := h.Rollout(t.Context(), "dev")
	if err != nil {
		t.Fatal(err)
	}
	for _, tr := range r.Targets {
		clusters, compliant, failed = clusters+tr.Clusters, compliant+tr.Compliant, failed+tr.Failed
	}
	return r.Revision, clusters, compliant, failed
}

func newSim(t *testing.T, h *hub.Hub, repo *gittest.Repo, opts sim.Options) *sim.Simulator {
	t.Helper()
	opts.Environment = "dev"
	src := sim.GitSource{Writer: gitops.NewWriter(gitops.Options{CacheDir: t.TempDir()}), Location: repo.URL(), Branch: "dev"}
	return sim.New(inProcess{h}, src, opts)
}

func TestSimOnce(t *testing.T) {
	h, repo := storetest.RunningHub(t, hub.Options{}), gittest.NewBare(t)
	rev := repo.Commit(t, "dev", gitopsTree).String()
	if err := h.PostDesired(t.Context(), desired(rev)); err != nil {
		t.Fatal(err)
	}
	s := newSim(t, h, repo, sim.Options{ClustersPerType: 5})
	if err := s.Run(t.Context(), true); err != nil {
		t.Fatal(err)
	}
	// east: 5 clusters × 2 targets, west: 5 × 1.
	if got, clusters, compliant, failed := counts(t, h); got != rev || clusters != 15 || compliant != 15 || failed != 0 {
		t.Fatalf("rollout %s: %d clusters, %d compliant, %d failed; want %s 15/15/0", got, clusters, compliant, failed, rev)
	}
	if n := s.Stats().Reports.Load(); n != 10 {
		t.Fatalf("%d reports sent, want 10", n)
	}
	// A second run finds the clusters registered (their tokens rotate) and fails everything.
	s = newSim(t, h, repo, sim.Options{ClustersPerType: 5, FailRate: 1})
	if err := s.Run(t.Context(), true); err != nil {
		t.Fatal(err)
	}
	if _, clusters, compliant, failed := counts(t, h); clusters != 15 || compliant != 0 || failed != 15 {
		t.Fatalf("fail rate 1: %d clusters, %d compliant, %d failed; want 15/0/15", clusters, compliant, failed)
	}
}

func TestSimFailRateIsStable(t *testing.T) {
	h, repo := storetest.RunningHub(t, hub.Options{}), gittest.NewBare(t)
	rev := repo.Commit(t, "dev", gitopsTree).String()
	if err := h.PostDesired(t.Context(), desired(rev)); err != nil {
		t.Fatal(err)
	}
	s := newSim(t, h, repo, sim.Options{ClustersPerType: 200, FailRate: 0.25, Seed: 7})
	if err := s.Run(t.Context(), true); err != nil {
		t.Fatal(err)
	}
	_, clusters, compliant, failed := counts(t, h)
	if clusters != 600 || compliant+failed != 600 || failed < 100 || failed > 200 {
		t.Fatalf("fail rate 0.25 over 600 cluster-targets: %d compliant, %d failed", compliant, failed)
	}
}

func TestSimFollowsTheBranch(t *testing.T) {
	h, repo := storetest.RunningHub(t, hub.Options{}), gittest.NewBare(t)
	first := repo.Commit(t, "dev", gitopsTree).String()
	if err := h.PostDesired(t.Context(), desired(first)); err != nil {
		t.Fatal(err)
	}
	s := newSim(t, h, repo, sim.Options{ClustersPerType: 3, Poll: 10 * time.Millisecond, Lag: 50 * time.Millisecond})
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx, false) }()
	next := map[string]string{}
	for k, v := range gitopsTree {
		next[k] = v
	}
	next["east/api-dev/reconciler.yaml"] = "a2"
	second := repo.Commit(t, "dev", next).String()
	if err := h.PostDesired(t.Context(), desired(second)); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		rev, clusters, compliant, _ := counts(t, h)
		if rev == second && clusters == 9 && compliant == 9 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the simulated fleet never reported %s: rollout %s %d/%d", second, rev, compliant, clusters)
		}
		time.Sleep(20 * time.Millisecond)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run after cancel: %v", err)
	}
}

func TestSimWithoutBranch(t *testing.T) {
	h, repo := storetest.RunningHub(t, hub.Options{}), gittest.NewBare(t)
	err := newSim(t, h, repo, sim.Options{ClustersPerType: 1}).Run(t.Context(), true)
	if err == nil {
		t.Fatal("a missing GitOps branch must be an error")
	}
}
