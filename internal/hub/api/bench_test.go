package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fleetform/fleetform/internal/hub"
	"github.com/fleetform/fleetform/internal/hub/api"
	"github.com/fleetform/fleetform/internal/hub/sqlite"
)

// Shape of the seeded fleet: 100,000 clusters of 100 cluster types in one environment, 10
// deployment targets scheduled on every cluster type (1,000 targets in the rollout).
const (
	benchClusters     = 100_000
	benchClusterTypes = 100
	benchTargets      = 10
)

// seedFleet writes a fleet straight through the store's Tx interface (registering 100,000
// clusters through the API would take minutes): clusters that reported the desired revision
// (9 in 10 compliant, 1 in 10 failed on one target), and the counters the hub keeps.
func seedFleet(b *testing.B, store hub.Store) {
	b.Helper()
	ctx := context.Background()
	now := time.Now().UTC()
	d := hub.Desired{Environment: "prod", Revision: "r1", GitOpsRepo: "https://example.com/gitops", Branch: "prod", PromotedCommit: "c1", PostedAt: now}
	for ct := range benchClusterTypes {
		for dt := range benchTargets {
			d.Assignments = append(d.Assignments, hub.DesiredAssignment{Workload: fmt.Sprintf("w%d", dt),
				DeploymentTarget: fmt.Sprintf("w%d-prod", dt), ClusterType: fmt.Sprintf("ct%03d", ct), Namespace: "ns"})
		}
	}
	err := store.Update(ctx, func(tx hub.Tx) error {
		if err := tx.PutDesired(ctx, d); err != nil {
			return err
		}
		var targets []hub.TargetCount
		var clusters []hub.ClusterCount
		perType := benchClusters / benchClusterTypes
		for ct := range benchClusterTypes {
			typ := fmt.Sprintf("ct%03d", ct)
			for i := range perType {
				c := hub.ClusterRecord{Cluster: hub.Cluster{Name: fmt.Sprintf("%s-%05d", typ, i), Environment: "prod", ClusterType: typ,
					RegisteredAt: now}, Reported: true, Fresh: true, Revision: "r1", Status: hub.Compliant, ObservedAt: now, ReceivedAt: now,
					TokenHash: hub.HashToken(fmt.Sprintf("%s-%05d", typ, i))}
				if err := tx.InsertClusters(ctx, c); err != nil {
					return err
				}
			}
			failed := perType / 10
			clusters = append(clusters, hub.ClusterCount{Environment: "prod", ClusterType: typ, Revision: hub.RegisteredRevision, Count: perType},
				hub.ClusterCount{Environment: "prod", ClusterType: typ, Revision: "r1", Count: perType})
			for dt := range benchTargets {
				target := fmt.Sprintf("w%d-prod", dt)
				targets = append(targets, hub.TargetCount{Environment: "prod", ClusterType: typ, Revision: "r1", DeploymentTarget: target,
					State: hub.StateCompliant, Count: perType - failed})
				targets = append(targets, hub.TargetCount{Environment: "prod", ClusterType: typ, Revision: "r1", DeploymentTarget: target,
					State: hub.StateFailed, Count: failed})
			}
		}
		return tx.AddCounts(ctx, targets, clusters)
	})
	if err != nil {
		b.Fatal(err)
	}
}

// benchServer is the API over a seeded SQLite store.
func benchServer(b *testing.B) *server {
	b.Helper()
	path := filepath.Join(b.TempDir(), "hub.db")
	store, err := sqlite.Open(context.Background(), path)
	if err != nil {
		b.Fatal(err)
	}
	seedFleet(b, store)
	if err := store.Close(); err != nil {
		b.Fatal(err)
	}
	return startServer(b, path)
}

// BenchmarkRollout100k: GET /api/v1/environments/prod/rollout over 100,000 clusters (1,000
// targets), through HTTP. Bar: 200 ms.
func BenchmarkRollout100k(b *testing.B) {
	benchGet(b, "/api/v1/environments/prod/rollout", func(body []byte) error {
		if len(body) < 1000 {
			return fmt.Errorf("short answer: %s", body)
		}
		return nil
	})
}

// BenchmarkSource100k: GET /api/v1/environments/prod/source, what a promotion's gates read
// (issue 5: 1 s bar for 100,000 clusters).
func BenchmarkSource100k(b *testing.B) {
	benchGet(b, "/api/v1/environments/prod/source", nil)
}

func benchGet(b *testing.B, path string, check func([]byte) error) {
	b.Helper()
	s := benchServer(b)
	client := s.http.Client()
	b.ResetTimer()
	for b.Loop() {
		status, body, err := get(client, s.http.URL+path)
		if err != nil || status != http.StatusOK {
			b.Fatalf("GET %s: %d %v", path, status, err)
		}
		if check != nil {
			if err := check(body); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// get sends an authenticated GET and returns the status and body.
func get(c *http.Client, url string) (int, []byte, error) {
	req, err := http.NewRequestWithContext(context.Background(), http.MethodGet, url, nil)
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Authorization", "Bearer "+adminToken)
	resp, err := c.Do(req)
	if err != nil {
		return 0, nil, err
	}
	body, err := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	return resp.StatusCode, body, err
}

// BenchmarkReports posts reports through HTTP from parallel clients, each cluster driven by
// one goroutine; every 10th report of a cluster changes a deployment's status.
func BenchmarkReports(b *testing.B) {
	s := startServer(b, filepath.Join(b.TempDir(), "hub.db"))
	const clusters = 1000
	tokens := make([]string, clusters)
	for i := range tokens {
		tokens[i] = s.register(fmt.Sprintf("c%04d", i), "dev", "edge")
	}
	s.must(http.StatusCreated, "POST", "/api/v1/desired", adminToken, desired("dev", "r1"), nil)
	var next atomic.Int64
	b.SetParallelism(16)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		i := int(next.Add(1)-1) % clusters
		name, tok := fmt.Sprintf("c%04d", i), tokens[i]
		observed := time.Now().UTC()
		for n := 0; pb.Next(); n++ {
			observed = observed.Add(time.Millisecond)
			st := hub.Ready
			if n%10 == 0 && n%20 != 0 {
				st = hub.DeploymentProgress
			}
			r := hub.Report{Cluster: name, Revision: "r1", Status: hub.Compliant, ObservedAt: observed,
				Deployments: []hub.DeploymentReport{{DeploymentTarget: "shop-dev", Namespace: "shop", Status: st, Revision: "v1"}}}
			data, _ := json.Marshal(r)
			req, _ := http.NewRequestWithContext(context.Background(), http.MethodPost, s.http.URL+"/api/v1/reports", bytes.NewReader(data))
			req.Header.Set("Authorization", "Bearer "+tok)
			resp, err := s.http.Client().Do(req)
			if err != nil {
				b.Error(err)
				return
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			_ = resp.Body.Close()
			if resp.StatusCode != http.StatusAccepted {
				b.Errorf("status %d", resp.StatusCode)
				return
			}
		}
	})
}

// BenchmarkReportBatch posts reports in batches of 100 (POST /api/v1/reports/batch with a
// relay token, as hub relay forwards them) from parallel clients, each owning 100 clusters;
// every 10th report of a cluster changes a deployment's status. One op is one report.
func BenchmarkReportBatch(b *testing.B) {
	s := startServer(b, filepath.Join(b.TempDir(), "hub.db"))
	const perBatch, blocks = 100, 64
	regs := api.ClusterBatch{}
	for i := range perBatch * blocks {
		regs.Clusters = append(regs.Clusters, api.ClusterRegistration{Name: fmt.Sprintf("c%04d", i), Environment: "dev", ClusterType: "edge"})
	}
	var issued api.IssuedTokens
	s.must(http.StatusCreated, "POST", "/api/v1/clusters/batch", adminToken, regs, &issued)
	s.must(http.StatusCreated, "POST", "/api/v1/desired", adminToken, desired("dev", "r1"), nil)
	var relay api.IssuedToken
	s.must(http.StatusCreated, "POST", "/api/v1/tokens", adminToken, api.TokenRequest{Name: "bench", Kind: hub.TokenRelay}, &relay)
	var next atomic.Int64
	b.SetParallelism(2)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		block := issued.Clusters[int(next.Add(1)-1)%blocks*perBatch:][:perBatch]
		batch := api.ReportBatch{Reports: make([]api.SignedReport, perBatch)}
		observed := time.Now().UTC()
		for n := 0; ; n++ {
			k := 0
			for ; k < perBatch && pb.Next(); k++ {
				st := hub.Ready
				if n%10 == 0 && n%20 != 0 {
					st = hub.DeploymentProgress
				}
				batch.Reports[k] = api.SignedReport{Token: block[k].Token, Report: hub.Report{Cluster: block[k].Name, Revision: "r1",
					Status: hub.Compliant, ObservedAt: observed.Add(time.Duration(n) * time.Millisecond),
					Deployments: []hub.DeploymentReport{{DeploymentTarget: "shop-dev", Namespace: "shop", Status: st, Revision: "v1"}}}}
			}
			if k == 0 {
				return
			}
			out, err := postBatch(s, relay.Token, api.ReportBatch{Reports: batch.Reports[:k]})
			if err != nil {
				b.Error(err)
				return
			}
			for _, r := range out.Results {
				if !r.Accepted {
					b.Errorf("report refused: %+v", r)
					return
				}
			}
			if k < perBatch {
				return
			}
		}
	})
}

// postBatch posts a batch of reports (from any goroutine: no Fatal).
func postBatch(s *server, token string, batch api.ReportBatch) (api.ReportResults, error) {
	var out api.ReportResults
	data, err := json.Marshal(batch)
	if err != nil {
		return out, err
	}
	req, err := http.NewRequestWithContext(context.Background(), http.MethodPost, s.http.URL+"/api/v1/reports/batch", bytes.NewReader(data))
	if err != nil {
		return out, err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := s.http.Client().Do(req)
	if err != nil {
		return out, err
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		return out, fmt.Errorf("status %d", resp.StatusCode)
	}
	return out, json.NewDecoder(resp.Body).Decode(&out)
}
