package ui_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/fleetform/fleetform/internal/hub"
	"github.com/fleetform/fleetform/internal/hub/api"
	"github.com/fleetform/fleetform/internal/hub/postgres"
	"github.com/fleetform/fleetform/internal/hub/sqlite"
	"github.com/fleetform/fleetform/internal/testutil/pgtest"
	"github.com/fleetform/fleetform/internal/ui"
)

// The benchmark fleet: 100,000 clusters in 5 environments (20,000 each, 100 cluster types of
// 200 clusters), 1,000 deployment targets (200 per environment, 2 per workload, each on 10
// cluster types: 2,000 assignments per environment with a composed configuration of 8 keys).
const (
	benchEnvs         = 5
	benchTypesPerEnv  = 100
	benchClustersType = 200
	benchTargetsEnv   = 200
	benchTypesTarget  = 10
)

var benchEnvNames = []string{"dev", "test", "stage", "canary", "prod"}

// seedBenchFleet writes the fleet through the store's transaction interface (registering
// 100,000 clusters one report at a time would take minutes), with the counters the hub
// keeps, one cluster's deployments, history events and promotion decisions.
func seedBenchFleet(b *testing.B, store hub.Store, perType int) {
	b.Helper()
	ctx := context.Background()
	now := time.Now().UTC().Add(-time.Minute)
	for e, env := range benchEnvNames[:benchEnvs] {
		rev := "rev-" + env
		d := hub.Desired{Environment: env, Revision: rev, GitOpsRepo: "https://github.com/org/gitops", Branch: env,
			PromotedCommit: "c0ffee" + env, PostedAt: now}
		var targets []hub.TargetCount
		var counts []hub.ClusterCount
		var events []hub.Event
		for t := range benchTargetsEnv {
			wl := fmt.Sprintf("workload-%03d", t/2)
			dt := fmt.Sprintf("%s-%s-%d", wl, env, t%2)
			for k := range benchTypesTarget {
				ct := fmt.Sprintf("type-%03d", (t+k*7)%benchTypesPerEnv)
				d.Assignments = append(d.Assignments, hub.DesiredAssignment{Workload: wl, DeploymentTarget: dt, ClusterType: ct,
					Namespace: dt, Manifests: map[string]string{"namespace.yaml": "kind: Namespace", "reconciler.yaml": "kind: Kustomization"},
					Config: map[string]any{"ENVIRONMENT": env, "REPLICAS": 1 + e, "REGION": "east", "LOG_LEVEL": "info", "TIER": "web",
						"OWNER": "team-a", "DB": map[string]any{"host": "db." + env, "pool": 10}, "FEATURES": []any{"a", "b"}}})
				failed := (t + k) % 20
				targets = append(targets,
					hub.TargetCount{Environment: env, ClusterType: ct, Revision: rev, DeploymentTarget: dt, State: hub.StateCompliant, Count: perType - failed},
					hub.TargetCount{Environment: env, ClusterType: ct, Revision: rev, DeploymentTarget: dt, State: hub.StateFailed, Count: failed})
			}
			for i := range 10 {
				events = append(events, hub.Event{Time: now.Add(time.Duration(i) * time.Second), Kind: hub.EventDeployment, Environment: env,
					Workload: wl, DeploymentTarget: dt, Cluster: fmt.Sprintf("%s-type-000-%04d", env, i), Revision: rev, From: "Progressing", To: "Ready"})
			}
		}
		if e > 0 {
			events = append(events, hub.Event{Time: now, Kind: hub.EventPromotion, Environment: env, From: benchEnvNames[e-1], To: env,
				Revision: "c0ffee" + env, Message: "refused: " + benchEnvNames[e-1] + ": 95% compliant, needs 100%"})
		}
		err := store.Update(ctx, func(tx hub.Tx) error {
			if err := tx.PutDesired(ctx, d); err != nil {
				return err
			}
			for c := range benchTypesPerEnv {
				ct := fmt.Sprintf("type-%03d", c)
				for i := range perType {
					name := fmt.Sprintf("%s-%s-%04d", env, ct, i)
					rec := hub.ClusterRecord{Cluster: hub.Cluster{Name: name, Environment: env, ClusterType: ct, RegisteredAt: now,
						Labels: map[string]string{"region": "east"}}, Reported: true, Fresh: i%50 != 0, Revision: rev, Status: hub.Compliant,
						ObservedAt: now, ReceivedAt: now, TokenHash: hub.HashToken(name)}
					if err := tx.InsertClusters(ctx, rec); err != nil {
						return err
					}
				}
				counts = append(counts, hub.ClusterCount{Environment: env, ClusterType: ct, Revision: hub.RegisteredRevision, Count: perType},
					hub.ClusterCount{Environment: env, ClusterType: ct, Revision: rev, Count: perType - perType/50})
			}
			if err := tx.SetDeployments(ctx, env+"-type-000-0001", []hub.DeploymentState{{DeploymentTarget: "workload-000-" + env + "-0",
				Namespace: "ns", Status: hub.Ready, Revision: rev, Since: now}}, nil); err != nil {
				return err
			}
			if err := tx.AddEvents(ctx, events); err != nil {
				return err
			}
			return tx.AddCounts(ctx, targets, counts)
		})
		if err != nil {
			b.Fatal(err)
		}
	}
}

// benchPages is every page at the benchmark fleet's scale.
var benchPages = []struct{ name, path string }{
	{"overview", "/"},
	{"environment", "/environments/prod"},
	{"workload", "/workloads/workload-042"},
	{"cluster-type", "/cluster-types/prod/type-007"},
	{"cluster", "/clusters/prod-type-000-0001"},
	{"diff", "/diff?from=stage&to=prod"},
	{"promotions", "/promotions"},
	{"api-rollout", "/api/v1/environments/prod/rollout"},
}

func benchUI(b *testing.B, store hub.Store, perType int) {
	b.Helper()
	seedBenchFleet(b, store, perType)
	h := hub.New(store, hub.Options{})
	ctx := context.Background()
	if _, err := h.Bootstrap(ctx, adminToken); err != nil {
		b.Fatal(err)
	}
	web, err := ui.New(h, ui.Options{})
	if err != nil {
		b.Fatal(err)
	}
	srv := httptest.NewServer(ui.Mount(api.New(h, api.Options{}), web))
	defer srv.Close()
	for _, p := range benchPages {
		b.Run(p.name, func(b *testing.B) {
			var size int
			for b.Loop() {
				req, err := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+p.path, nil)
				if err != nil {
					b.Fatal(err)
				}
				req.Header.Set("Authorization", "Bearer "+adminToken)
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					b.Fatal(err)
				}
				body, err := io.ReadAll(resp.Body)
				_ = resp.Body.Close()
				if err != nil || resp.StatusCode != http.StatusOK {
					b.Fatalf("GET %s: %d %v\n%.2000s", p.path, resp.StatusCode, err, body)
				}
				size = len(body)
			}
			b.ReportMetric(float64(size), "html-bytes")
		})
	}
}

// BenchmarkPages100kSQLite serves every page over 100,000 clusters on SQLite.
func BenchmarkPages100kSQLite(b *testing.B) {
	store, err := sqlite.Open(context.Background(), filepath.Join(b.TempDir(), "hub.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = store.Close() }()
	benchUI(b, store, benchClustersType)
}

// BenchmarkPages100kPostgreSQL serves every page over 100,000 clusters on PostgreSQL.
func BenchmarkPages100kPostgreSQL(b *testing.B) {
	store, err := postgres.Open(context.Background(), pgtest.NewDatabase(b), nil)
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = store.Close() }()
	benchUI(b, store, benchClustersType)
}

// BenchmarkPages1MSQLite serves every page over 1,000,000 clusters (2,000 per cluster type)
// on SQLite, and reports the database's size per cluster. The seed takes minutes, so it runs
// only with FLEETFORM_BENCH_MILLION=1:
// FLEETFORM_BENCH_MILLION=1 go test -run '^$' -bench Pages1MSQLite -benchtime 5x ./internal/ui/
func BenchmarkPages1MSQLite(b *testing.B) {
	if os.Getenv("FLEETFORM_BENCH_MILLION") != "1" {
		b.Skip("FLEETFORM_BENCH_MILLION=1 runs it (the seed takes minutes)")
	}
	path := filepath.Join(b.TempDir(), "hub.db")
	store, err := sqlite.Open(context.Background(), path)
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = store.Close() }()
	benchUI(b, store, 10*benchClustersType)
	if st, err := os.Stat(path); err == nil {
		b.Logf("database: %d bytes, %.0f bytes per cluster", st.Size(), float64(st.Size())/float64(benchEnvs*benchTypesPerEnv*10*benchClustersType))
	}
}

// BenchmarkPages1MPostgreSQL is BenchmarkPages1MSQLite on PostgreSQL (a new database on the
// local server), and reports the database's size per cluster:
// FLEETFORM_BENCH_MILLION=1 go test -run '^$' -bench Pages1MPostgreSQL -benchtime 5x ./internal/ui/
func BenchmarkPages1MPostgreSQL(b *testing.B) {
	if os.Getenv("FLEETFORM_BENCH_MILLION") != "1" {
		b.Skip("FLEETFORM_BENCH_MILLION=1 runs it (the seed takes minutes)")
	}
	store, err := postgres.Open(context.Background(), pgtest.NewDatabase(b), nil)
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = store.Close() }()
	benchUI(b, store, 10*benchClustersType)
}
