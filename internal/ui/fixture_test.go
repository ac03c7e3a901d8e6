package ui_test

import (
	"context"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/fleetform/fleetform/internal/hub"
	"github.com/fleetform/fleetform/internal/hub/api"
	"github.com/fleetform/fleetform/internal/hub/sqlite"
	"github.com/fleetform/fleetform/internal/testutil/storetest"
	"github.com/fleetform/fleetform/internal/ui"
)

const adminToken = "admin-secret-token"

// fleet is a hub on a real SQLite file with three environments, served by the API and the
// UI on one httptest server.
type fleet struct {
	hub       *hub.Hub
	web       *ui.Handler
	srv       *httptest.Server
	readToken string
}

// clusterSpec is a cluster of the fixture and what it reports.
type clusterSpec struct {
	name, env, clusterType string
	status                 hub.DeploymentStatus // "" never reports
}

// newFleet builds the fixture: dev runs shop (on small and large) and billing (on large),
// stage runs shop, prod runs shop; dev→stage→prod; stage's promotion was refused, prod's
// went through.
func newFleet(tb testing.TB) *fleet {
	tb.Helper()
	t := tb
	ctx := context.Background()
	store, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "hub.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = store.Close() })
	h := hub.New(store, hub.Options{})
	if _, err := h.Bootstrap(ctx, adminToken); err != nil {
		t.Fatal(err)
	}
	storetest.RunHub(t, h)
	read, err := h.CreateReadToken(ctx, "viewer")
	if err != nil {
		t.Fatal(err)
	}
	web, err := ui.New(h, ui.Options{})
	if err != nil {
		t.Fatal(err)
	}
	f := &fleet{hub: h, web: web, readToken: read}
	f.srv = httptest.NewServer(ui.Mount(api.New(h, api.Options{}), web))
	t.Cleanup(f.srv.Close)

	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	desired := func(env, rev, commit string, as ...hub.DesiredAssignment) {
		must(h.PostDesired(ctx, hub.Desired{Environment: env, Revision: rev, GitOpsRepo: "https://user:secret-pat@github.com/org/gitops.git",
			Branch: env, PromotedCommit: commit, Assignments: as}))
	}
	shop := func(env, ct string, replicas int) hub.DesiredAssignment {
		return hub.DesiredAssignment{Workload: "shop", DeploymentTarget: "shop-" + env, ClusterType: ct, Namespace: env + "-shop",
			Manifests: map[string]string{"ns.yaml": "kind: Namespace"},
			Config:    map[string]any{"ENVIRONMENT": env, "REPLICAS": replicas, "DB": map[string]any{"host": "db", "pool": 5}}}
	}
	desired("dev", "r-dev-1", "c0ffee1111111111111111111111111111111111",
		shop("dev", "small", 1), shop("dev", "large", 1),
		hub.DesiredAssignment{Workload: "billing", DeploymentTarget: "billing-dev", ClusterType: "large", Namespace: "dev-billing",
			Manifests: map[string]string{"ns.yaml": "kind: Namespace"}, Waiting: []string{"config of billing on large: BILLING_QUEUE is required"}})
	desired("stage", "r-stage-1", "beef222222222222222222222222222222222222", shop("stage", "small", 2))
	desired("prod", "r-prod-1", "beef222222222222222222222222222222222222", shop("prod", "small", 3))

	specs := []clusterSpec{
		{"dev-s1", "dev", "small", hub.Ready}, {"dev-s2", "dev", "small", hub.Ready}, {"dev-s3", "dev", "small", hub.Failed},
		{"dev-s4", "dev", "small", ""}, {"dev-l1", "dev", "large", hub.Ready}, {"dev-l2", "dev", "large", hub.Ready},
		{"stage-s1", "stage", "small", hub.Ready}, {"prod-s1", "prod", "small", hub.Ready}, {"prod-s2", "prod", "small", ""},
	}
	revs := map[string]string{"dev": "r-dev-1", "stage": "r-stage-1", "prod": "r-prod-1"}
	for _, c := range specs {
		_, err := h.RegisterCluster(ctx, hub.Cluster{Name: c.name, Environment: c.env, ClusterType: c.clusterType,
			Labels: map[string]string{"region": "east"}}, false)
		must(err)
		if c.status == "" {
			continue
		}
		var deps []hub.DeploymentReport
		targets := map[string][]string{"dev/small": {"shop-dev"}, "dev/large": {"shop-dev", "billing-dev"},
			"stage/small": {"shop-stage"}, "prod/small": {"shop-prod"}}[c.env+"/"+c.clusterType]
		for _, dt := range targets {
			deps = append(deps, hub.DeploymentReport{DeploymentTarget: dt, Namespace: c.env + "-" + dt, Status: c.status, Revision: revs[c.env]})
		}
		status := hub.Compliant
		if c.status == hub.Failed {
			status = hub.NonCompliant
		}
		must(h.Report(ctx, hub.Principal{Kind: hub.TokenCluster, Cluster: c.name}, hub.Report{Cluster: c.name,
			Revision: revs[c.env], Status: status, ObservedAt: time.Now().Add(-time.Second), Deployments: deps}))
	}
	for env, v := range map[string]string{"dev": "1.4.2", "stage": "1.4.1", "prod": "1.4.1"} {
		must(h.PostWorkloadVersion(ctx, hub.WorkloadVersion{Environment: env, Workload: "shop", DeploymentTarget: "shop-" + env, Version: v}))
	}
	must(h.RecordSync(ctx, hub.SyncRecord{Environment: "dev", ControlPlaneCommit: "c0ffee1111111111111111111111111111111111",
		GitOpsRepo: "https://github.com/org/gitops.git", Branch: "dev", GitOpsCommit: "r-dev-1", FilesChanged: 12,
		Trigger: "webhook", Failed: []hub.FailedAssignment{{DeploymentTarget: "reports-dev", ClusterType: "small",
			Error: "templates/reports.yaml:3: REPLICAS is not set"}}}))
	now := time.Now().Add(-time.Minute)
	must(h.Record(ctx, hub.Event{Time: now, Kind: hub.EventPromotion, Environment: "stage", From: "dev", To: "stage",
		Revision: "c0ffee1111111111111111111111111111111111",
		Message:  "refused: dev: 2 of 4 small clusters compliant (50%), needs 100%; needs an approval: fleetform approve --env stage"}))
	must(h.Record(ctx, hub.Event{Time: now, Kind: hub.EventPromotion, Environment: "prod", From: "stage", To: "prod",
		Revision: "beef222222222222222222222222222222222222", Message: "promoted beef222 to prod"}))
	return f
}

// hubPromotions selects an environment's promotion events.
func hubPromotions(env string) hub.HistoryFilter {
	return hub.HistoryFilter{Environment: env, Kind: hub.EventPromotion}
}
