package storetest

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/fleetform/fleetform/internal/hub"
)

// Plan is how a store reads the events table for a query.
type Plan struct {
	// Indexes are the indexes of the events table the query searches.
	Indexes []string
	// FullScan is set when the query reads the whole events table or a whole index of it
	// (a walk newest first that stops only at its limit, too).
	FullScan bool
	// Text is the plan as the store prints it, for failure messages.
	Text string
}

// Explainer returns the plan of Reader.History(f) on store: each store's test passes the
// one that asks its database (EXPLAIN). It runs after the large history is written.
type Explainer func(ctx context.Context, store hub.Store, f hub.HistoryFilter) (Plan, error)

// The events table of a large history: historyClusters busy clusters share its events
// evenly over historySpan, newest last; cluster "quiet" has three events, all in the oldest
// hour.
const (
	historyClusters = 1000
	historySpan     = 30 * 24 * time.Hour
	historyBatch    = 2_000
	quietCluster    = "quiet"
)

// Sizes of the large history: the benchmark's, and the conformance suite's. The suite
// checks query plans, which SQLite makes without statistics and PostgreSQL makes the same
// from this size up; it stays smaller because SQLite writes about 4,000 events/s under the
// race detector (make test runs it).
const (
	BenchHistoryEvents = 300_000
	suiteHistoryEvents = 20_000
)

var historyStart = time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC)

// busyCluster is the name of the i-th busy cluster.
func busyCluster(i int) string { return fmt.Sprintf("busy-%04d", i) }

// SeedHistory writes a large history into store directly (no hub involved): n events of
// 1,000 clusters over 30 days, plus cluster "quiet" with three old events, and registers
// "quiet" and "busy-0000" so that the hub can read them.
func SeedHistory(ctx context.Context, store hub.Store, n int) error {
	for start := 0; start < n; start += historyBatch {
		events := make([]hub.Event, 0, historyBatch)
		for i := start; i < min(start+historyBatch, n); i++ {
			events = append(events, historyEvent(i, n))
		}
		if err := store.Update(ctx, func(tx hub.Tx) error { return tx.AddEvents(ctx, events) }); err != nil {
			return fmt.Errorf("seed history: %w", err)
		}
	}
	return store.Update(ctx, func(tx hub.Tx) error {
		var quiet []hub.Event
		for i := range 3 {
			quiet = append(quiet, hub.Event{Time: historyStart.Add(time.Duration(i) * time.Minute), Kind: hub.EventCluster,
				Environment: "prod", ClusterType: "edge", Cluster: quietCluster, Revision: "r0", To: fmt.Sprintf("step-%d", i)})
		}
		if err := tx.AddEvents(ctx, quiet); err != nil {
			return err
		}
		for _, name := range []string{quietCluster, busyCluster(0)} {
			c := hub.ClusterRecord{Cluster: hub.Cluster{Name: name, Environment: "prod", ClusterType: "edge", RegisteredAt: historyStart}}
			if err := tx.InsertClusters(ctx, c); err != nil {
				return err
			}
		}
		return nil
	})
}

// historyEvent is the i-th of n events of a large history: clusters take turns,
// environments alternate, one event in four is a deployment's.
func historyEvent(i, n int) hub.Event {
	e := hub.Event{Time: historyStart.Add(time.Duration(int64(historySpan) / int64(n) * int64(i))),
		Kind: hub.EventCluster, Environment: []string{"dev", "prod"}[i%2], ClusterType: "edge",
		Cluster: busyCluster(i % historyClusters), Revision: fmt.Sprintf("r%d", i/historyClusters), To: "Compliant"}
	if i%4 == 3 {
		e.Kind, e.Workload, e.DeploymentTarget, e.To = hub.EventDeployment, "shop", "shop-web", "Ready"
	}
	return e
}

// testLargeHistory reads one cluster's history out of a large one: the answers are that
// cluster's events, newest first, and the store finds them through its cluster index,
// whatever else the filter names (not by walking the whole history newest first).
func (s suite) testLargeHistory(t *testing.T) {
	store, _ := s.open(t)
	ctx := context.Background()
	if err := SeedHistory(ctx, store, suiteHistoryEvents); err != nil {
		t.Fatal(err)
	}
	e := start(t, store, newClock())
	detail, err := e.hub.Cluster(ctx, quietCluster)
	if err != nil {
		t.Fatal(err)
	}
	if got := eventSteps(detail.RecentEvents); !slices.Equal(got, []string{"step-2", "step-1", "step-0"}) {
		t.Fatalf("recent events of %s: %v, want its three, newest first", quietCluster, got)
	}
	busy, err := e.hub.History(ctx, hub.HistoryFilter{Cluster: busyCluster(0)})
	if err != nil {
		t.Fatal(err)
	}
	if len(busy) != suiteHistoryEvents/historyClusters || !busy[0].Time.Equal(historyEvent(suiteHistoryEvents-historyClusters, suiteHistoryEvents).Time) {
		t.Fatalf("history of %s: %d events, newest at %v", busyCluster(0), len(busy), busy[0].Time)
	}
	for i, ev := range busy {
		if ev.Cluster != busyCluster(0) || (i > 0 && !ev.Time.Before(busy[i-1].Time)) {
			t.Fatalf("history of %s: event %d is %+v after %+v", busyCluster(0), i, ev, busy[max(i-1, 0)])
		}
	}
	for _, f := range []hub.HistoryFilter{
		{Cluster: quietCluster},
		{Cluster: busyCluster(7), Limit: 50},
		{Cluster: quietCluster, Since: historyStart.Add(time.Hour)},
		{Cluster: quietCluster, Environment: "prod"},
		{Cluster: quietCluster, Environment: "prod", Kind: hub.EventCluster, ClusterType: "edge"},
		{Cluster: quietCluster, Workload: "shop"},
	} {
		checkClusterPlan(t, s.explain, store, f)
	}
}

// checkClusterPlan checks that History(f) searches the events of f's cluster only.
func checkClusterPlan(t *testing.T, explain Explainer, store hub.Store, f hub.HistoryFilter) {
	t.Helper()
	if f.Limit == 0 {
		f.Limit = hub.DefaultHistoryLimit
	}
	plan, err := explain(context.Background(), store, f)
	if err != nil {
		t.Fatalf("explain %+v: %v", f, err)
	}
	if plan.FullScan || !slices.Equal(plan.Indexes, []string{"events_by_cluster"}) {
		t.Errorf("history %+v reads %v (full scan: %v), want only events_by_cluster:\n%s", f, plan.Indexes, plan.FullScan, plan.Text)
	}
}

func eventSteps(events []hub.Event) []string {
	out := make([]string, len(events))
	for i, e := range events {
		out[i] = e.To
	}
	return out
}

// BenchClusterHistory measures reading one cluster out of a history of BenchHistoryEvents
// events (SeedHistory, written once): "cluster" is Hub.Cluster (GET /api/v1/clusters/NAME: the registration,
// deployments and last 50 events), "history" is Hub.History of the cluster (GET
// /api/v1/history?cluster=NAME, up to 1,000 events); each for the quiet cluster (three old
// events) and a busy one (300 events).
func BenchClusterHistory(b *testing.B, store hub.Store) {
	b.Helper()
	ctx := context.Background()
	if err := SeedHistory(ctx, store, BenchHistoryEvents); err != nil {
		b.Fatal(err)
	}
	h := hub.New(store, hub.Options{SweepEvery: -1})
	for _, name := range []string{quietCluster, busyCluster(0)} {
		b.Run("cluster/"+name, func(b *testing.B) {
			for b.Loop() {
				if _, err := h.Cluster(ctx, name); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("history/"+name, func(b *testing.B) {
			for b.Loop() {
				if _, err := h.History(ctx, hub.HistoryFilter{Cluster: name}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
