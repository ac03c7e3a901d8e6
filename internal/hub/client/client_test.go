package client_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/fleetform/fleetform/internal/hub"
	"github.com/fleetform/fleetform/internal/hub/api"
	"github.com/fleetform/fleetform/internal/hub/client"
	"github.com/fleetform/fleetform/internal/testutil/storetest"
)

const adminToken = "admin-secret"

// startHub runs a hub on SQLite behind the real API handler and returns its URL.
func startHub(t *testing.T) string {
	t.Helper()
	h := storetest.RunningHub(t, hub.Options{})
	if _, err := h.Bootstrap(context.Background(), adminToken); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(api.New(h, api.Options{}))
	t.Cleanup(srv.Close)
	return srv.URL
}

func newClient(t *testing.T, url, token string) *client.Client {
	t.Helper()
	c, err := client.New(url, token, &http.Client{Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestNewRejectsBadURLs(t *testing.T) {
	for _, u := range []string{"", "hub:8080", "ftp://hub", "http://"} {
		if _, err := client.New(u, "t", nil); err == nil {
			t.Errorf("New(%q) accepted it", u)
		}
	}
}

func TestEveryEndpoint(t *testing.T) {
	ctx := context.Background()
	url := startHub(t)
	admin := newClient(t, url+"/", adminToken) // a trailing slash is fine

	if err := admin.Ready(ctx); err != nil {
		t.Fatal(err)
	}
	reg, err := admin.RegisterCluster(ctx, api.ClusterRegistration{Name: "edge-1", Environment: "dev", ClusterType: "edge",
		Labels: map[string]string{"region": "west"}}, false)
	if err != nil || reg.Name != "edge-1" || reg.Token == "" {
		t.Fatalf("register: %+v %v", reg, err)
	}
	if _, err := admin.RegisterCluster(ctx, api.ClusterRegistration{Name: "edge-1", Environment: "dev", ClusterType: "edge"}, false); !errors.Is(err, hub.ErrExists) {
		t.Fatalf("second registration: %v", err)
	}
	rotated, err := admin.RegisterCluster(ctx, api.ClusterRegistration{Name: "edge-1", Environment: "dev", ClusterType: "edge",
		Labels: map[string]string{"region": "west"}}, true)
	if err != nil || rotated.Token == reg.Token {
		t.Fatalf("rotate: %+v %v", rotated, err)
	}
	readTok, err := admin.CreateReadToken(ctx, "grafana")
	if err != nil || readTok.Token == "" {
		t.Fatalf("read token: %+v %v", readTok, err)
	}
	reader := newClient(t, url, readTok.Token)

	d := hub.Desired{Environment: "dev", Revision: "r1", GitOpsRepo: "https://example.com/gitops", Branch: "dev", PromotedCommit: "c1",
		Assignments: []hub.DesiredAssignment{{Workload: "shop", DeploymentTarget: "shop-dev", ClusterType: "edge", Namespace: "shop",
			Manifests: map[string]string{"path": "."}}}}
	if acc, err := admin.PostDesired(ctx, d); err != nil || acc.Assignments != 1 {
		t.Fatalf("desired: %+v %v", acc, err)
	}
	prod := d
	prod.Environment, prod.Revision = "prod", "p1"
	if _, err := admin.PostDesired(ctx, prod); err != nil {
		t.Fatal(err)
	}
	if err := admin.PostWorkloadVersion(ctx, hub.WorkloadVersion{Environment: "dev", Workload: "shop", DeploymentTarget: "shop-dev", Version: "1.0"}); err != nil {
		t.Fatal(err)
	}

	cluster := newClient(t, url, rotated.Token)
	if err := cluster.Report(ctx, hub.Report{Cluster: "edge-1", Revision: "r1", Status: hub.Compliant, ObservedAt: time.Now(),
		Deployments: []hub.DeploymentReport{{DeploymentTarget: "shop-dev", Namespace: "shop", Status: hub.Ready, Revision: "v1"}}}); err != nil {
		t.Fatal(err)
	}

	envs, err := reader.Environments(ctx)
	if err != nil || len(envs) != 2 {
		t.Fatalf("environments: %v %v", envs, err)
	}
	ro, err := reader.Rollout(ctx, "dev")
	if err != nil || len(ro.Targets) != 1 || ro.Targets[0].Compliant != 1 {
		t.Fatalf("rollout: %+v %v", ro, err)
	}
	src, err := reader.Source(ctx, "dev")
	if err != nil || src.PromotedCommit != "c1" || src.Rollout.Revision != "r1" {
		t.Fatalf("source: %+v %v", src, err)
	}
	cd, err := reader.Cluster(ctx, "edge-1")
	if err != nil || cd.State != "Compliant" || cd.Labels["region"] != "west" {
		t.Fatalf("cluster: %+v %v", cd, err)
	}
	diff, err := reader.Diff(ctx, "dev", "prod")
	if err != nil || len(diff.Workloads) != 1 {
		t.Fatalf("diff: %+v %v", diff, err)
	}
	events, err := reader.History(ctx, hub.HistoryFilter{Environment: "dev", Kind: hub.EventCluster, Since: time.Now().Add(-time.Hour), Limit: 5})
	if err != nil || len(events) != 1 || events[0].To != "Compliant@r1" {
		t.Fatalf("history: %+v %v", events, err)
	}
	drift, err := reader.Drift(ctx, "dev", time.Hour)
	if err != nil || drift.Revision != "r1" || len(drift.Silent) != 0 {
		t.Fatalf("drift: %+v %v", drift, err)
	}

	if ok, err := admin.Approved(ctx, "prod", "c1"); err != nil || ok {
		t.Fatalf("approved before approval: %v %v", ok, err)
	}
	if err := admin.Approve(ctx, "prod", "c1", "ann"); err != nil {
		t.Fatal(err)
	}
	if ok, err := reader.Approved(ctx, "prod", "c1"); err != nil || !ok {
		t.Fatalf("approved: %v %v", ok, err)
	}
	if err := admin.Record(ctx, hub.Event{Kind: hub.EventPromotion, Environment: "prod", Revision: "c1", Message: "promoted"}); err != nil {
		t.Fatal(err)
	}
	if events, err := reader.History(ctx, hub.HistoryFilter{Environment: "prod", Kind: hub.EventPromotion}); err != nil || len(events) != 1 {
		t.Fatalf("promotion events: %+v %v", events, err)
	}
}

func TestErrorsCarryStatusAndMessage(t *testing.T) {
	ctx := context.Background()
	url := startHub(t)
	admin := newClient(t, url, adminToken)

	_, err := admin.Rollout(ctx, "nowhere")
	var e *client.Error
	if !errors.As(err, &e) || e.Status != http.StatusNotFound || e.Code != hub.CodeNotFound || e.Message == "" {
		t.Fatalf("rollout of an unknown environment: %#v", err)
	}
	if !errors.Is(err, hub.ErrNotFound) || hub.ErrorCode(err) != hub.CodeNotFound {
		t.Fatalf("a 404 does not match hub.ErrNotFound: %v", err)
	}

	anon := newClient(t, url, "")
	if _, err := anon.Environments(ctx); hub.ErrorCode(err) != hub.CodeUnauthorized {
		t.Fatalf("anonymous: %v", err)
	}
	if err := admin.Report(ctx, hub.Report{Cluster: "edge-1"}); hub.ErrorCode(err) != hub.CodeForbidden || !errors.As(err, &e) || e.Status != http.StatusForbidden {
		t.Fatalf("admin report: %v", err)
	}
	if _, err := admin.PostDesired(ctx, hub.Desired{Environment: "dev"}); hub.ErrorCode(err) != hub.CodeInvalid {
		t.Fatalf("invalid desired: %v", err)
	}

	// An answer that is not the hub's JSON still gives the status and the text.
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "bad gateway", http.StatusBadGateway)
	}))
	defer proxy.Close()
	_, err = newClient(t, proxy.URL, adminToken).Environments(ctx)
	if !errors.As(err, &e) || e.Status != http.StatusBadGateway || e.Message != "bad gateway" || hub.ErrorCode(err) != hub.CodeInternal {
		t.Fatalf("proxy error: %#v", err)
	}

	// A hub that cannot be reached is a plain error.
	proxy.Close()
	if _, err := newClient(t, proxy.URL, adminToken).Environments(ctx); err == nil || errors.As(err, &e) {
		t.Fatalf("unreachable hub: %v", err)
	}
}

func TestRegisterClustersInABatch(t *testing.T) {
	ctx := context.Background()
	url := startHub(t)
	admin := newClient(t, url, adminToken)
	batch := []api.ClusterRegistration{{Name: "sim-a-0", Environment: "dev", ClusterType: "a"}, {Name: "sim-a-1", Environment: "dev", ClusterType: "a"}}
	first, err := admin.RegisterClusters(ctx, batch, false)
	if err != nil || len(first) != 2 || first[0].Name != "sim-a-0" || first[1].Name != "sim-a-1" {
		t.Fatalf("batch: %+v %v", first, err)
	}
	// Without rotate, one existing name fails the whole batch and registers nothing.
	withNew := append([]api.ClusterRegistration{{Name: "sim-a-2", Environment: "dev", ClusterType: "a"}}, batch...)
	if _, err := admin.RegisterClusters(ctx, withNew, false); !errors.Is(err, hub.ErrExists) {
		t.Fatalf("batch with an existing name: %v", err)
	}
	if _, err := admin.Cluster(ctx, "sim-a-2"); !errors.Is(err, hub.ErrNotFound) {
		t.Fatalf("a failed batch registered sim-a-2: %v", err)
	}
	rotated, err := admin.RegisterClusters(ctx, withNew, true)
	if err != nil || len(rotated) != 3 || rotated[1].Token == first[0].Token {
		t.Fatalf("rotate: %+v %v", rotated, err)
	}
	// The new token reports for its cluster; the rotated-out one no longer does.
	r := hub.Report{Cluster: "sim-a-0", Revision: "r1", Status: hub.Compliant, ObservedAt: time.Now()}
	if err := admin.WithToken(rotated[1].Token).Report(ctx, r); err != nil {
		t.Fatalf("report with the rotated token: %v", err)
	}
	var e *client.Error
	if err := admin.WithToken(first[0].Token).Report(ctx, r); !errors.As(err, &e) || e.Status != 401 {
		t.Fatalf("report with the old token: %v", err)
	}
	if _, err := newClient(t, url, rotated[0].Token).RegisterClusters(ctx, batch, true); hub.ErrorCode(err) != hub.CodeForbidden {
		t.Fatalf("a cluster token registering clusters: %v", err)
	}
}

// TestTokens creates, lists, rotates and revokes tokens through the client.
func TestTokens(t *testing.T) {
	ctx := context.Background()
	url := startHub(t)
	admin := newClient(t, url, adminToken)
	expires := time.Now().Add(time.Hour).UTC().Truncate(time.Second)
	ops, err := admin.CreateToken(ctx, api.TokenRequest{Name: "ops", Kind: hub.TokenAdmin, ExpiresAt: &expires})
	if err != nil || ops.ID == "" || ops.ExpiresAt == nil {
		t.Fatalf("create: %+v %v", ops, err)
	}
	list, err := admin.Tokens(ctx, hub.TokenFilter{Kind: hub.TokenAdmin})
	if err != nil || len(list) != 2 {
		t.Fatalf("admin tokens: %+v %v", list, err)
	}
	rotated, err := admin.RotateToken(ctx, ops.ID, api.RotateRequest{})
	if err != nil || rotated.Name != "ops" || rotated.ExpiresAt != nil {
		t.Fatalf("rotate: %+v %v", rotated, err)
	}
	revoked, err := admin.RevokeToken(ctx, rotated.ID)
	if err != nil || revoked.State != hub.TokenRevoked {
		t.Fatalf("revoke: %+v %v", revoked, err)
	}
	if _, err := newClient(t, url, rotated.Token).Tokens(ctx, hub.TokenFilter{}); hub.ErrorCode(err) != hub.CodeUnauthorized {
		t.Fatalf("listing with the revoked token: %v", err)
	}
	if _, err := admin.RevokeToken(ctx, "nothing"); !errors.Is(err, hub.ErrNotFound) {
		t.Fatalf("revoke an unknown token: %v", err)
	}
}
