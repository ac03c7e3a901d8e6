package storetest

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fleetform/fleetform/internal/hub"
)

// Shape of the ingest benchmark's fleet.
const (
	benchClusters  = 1000
	benchTypes     = 4
	benchTargets   = 10
	benchReporters = 128
)

// BenchIngest measures ingest through the hub on store: benchClusters registered clusters of
// benchTypes cluster types with benchTargets deployment targets each, reported by
// benchReporters concurrent reporters. Sub-benchmark "changes" sends reports that change a
// deployment status every time (counters, deployments, history); "heartbeats" sends reports
// that only refresh the times. Each reports reports/s and the p99 latency of Hub.Report.
func BenchIngest(b *testing.B, store hub.Store, opts hub.Options) {
	b.Helper()
	h := hub.New(store, opts)
	RunHub(b, h)
	names := benchFleet(b, h)
	var seq atomic.Int64
	base := time.Now()
	for _, flavour := range []string{"changes", "heartbeats"} {
		b.Run(flavour, func(b *testing.B) {
			report := func(cluster int) hub.Report {
				n := seq.Add(1)
				r := hub.Report{Cluster: names[cluster], Revision: "r1", Status: hub.Compliant,
					ObservedAt: base.Add(time.Duration(n) * time.Microsecond)}
				for t := range benchTargets {
					st := hub.Ready
					if t == 0 && flavour == "changes" && n%2 == 0 {
						st = hub.Failed
					}
					r.Deployments = append(r.Deployments, hub.DeploymentReport{DeploymentTarget: fmt.Sprintf("t%d-web%d", cluster%benchTypes, t),
						Namespace: "shop", Status: st, Revision: "v1"})
				}
				return r
			}
			benchReports(b, h, names, report)
		})
	}
}

// benchFleet registers the clusters and posts the desired state.
func benchFleet(b *testing.B, h *hub.Hub) []string {
	b.Helper()
	ctx := context.Background()
	names := make([]string, benchClusters)
	var wg sync.WaitGroup
	errs := make(chan error, benchClusters)
	for g := range 16 {
		wg.Go(func() {
			for i := g; i < benchClusters; i += 16 {
				names[i] = fmt.Sprintf("c%05d", i)
				_, err := h.RegisterCluster(ctx, hub.Cluster{Name: names[i], Environment: "dev", ClusterType: fmt.Sprintf("t%d", i%benchTypes)}, false)
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			b.Fatal(err)
		}
	}
	var as []hub.DesiredAssignment
	for ct := range benchTypes {
		for t := range benchTargets {
			as = append(as, hub.DesiredAssignment{Workload: fmt.Sprintf("web%d", t), DeploymentTarget: fmt.Sprintf("t%d-web%d", ct, t),
				ClusterType: fmt.Sprintf("t%d", ct), Namespace: "shop"})
		}
	}
	if err := h.PostDesired(ctx, hub.Desired{Environment: "dev", Revision: "r1", Assignments: as}); err != nil {
		b.Fatal(err)
	}
	return names
}

// benchReports sends b.N reports from benchReporters goroutines, each owning a share of the
// clusters (so that a cluster's reports are sent in order).
func benchReports(b *testing.B, h *hub.Hub, names []string, report func(cluster int) hub.Report) {
	b.Helper()
	ctx := context.Background()
	var next atomic.Int64
	latencies := make([]time.Duration, b.N)
	errs := make(chan error, benchReporters)
	b.ResetTimer()
	var wg sync.WaitGroup
	for g := range benchReporters {
		wg.Go(func() {
			for k := 0; ; k++ {
				i := next.Add(1) - 1
				if i >= int64(b.N) {
					return
				}
				cluster := g + benchReporters*(k%(len(names)/benchReporters))
				start := time.Now()
				if err := h.Report(ctx, hub.Principal{Kind: hub.TokenCluster, Cluster: names[cluster]}, report(cluster)); err != nil {
					errs <- err
					return
				}
				latencies[i] = time.Since(start)
			}
		})
	}
	wg.Wait()
	b.StopTimer()
	close(errs)
	for err := range errs {
		b.Fatal(err)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "reports/s")
	slices.Sort(latencies)
	b.ReportMetric(float64(latencies[len(latencies)*99/100].Microseconds())/1000, "p99-ms")
}
