package hub_test

import (
	"context"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fleetform/fleetform/internal/hub"
	"github.com/fleetform/fleetform/internal/hub/postgres"
	"github.com/fleetform/fleetform/internal/hub/sqlite"
	"github.com/fleetform/fleetform/internal/testutil/pgtest"
)

// eachStore runs test on a new SQLite store and a new PostgreSQL store.
func eachStore(t *testing.T, test func(t *testing.T, store hub.Store)) {
	t.Helper()
	t.Run("sqlite", func(t *testing.T) {
		store, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "hub.db"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = store.Close() })
		test(t, store)
	})
	t.Run("postgres", func(t *testing.T) {
		store, err := postgres.Open(context.Background(), pgtest.NewDatabase(t), nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = store.Close() })
		test(t, store)
	})
}

// results is an Observer that records every report's result, in commit order.
type results struct {
	mu  sync.Mutex
	got []string
}

func (r *results) Reported(result string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.got = append(r.got, result)
}

func (r *results) Committed(int, time.Duration, error) {}

// take returns the results recorded since the last take.
func (r *results) take() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.got
	r.got = nil
	return out
}

// readCounter is a Store whose write transactions count the clusters a batch reads, and offer
// the store's one-statement heartbeat as the store's own transactions do.
type readCounter struct {
	hub.Store
	reads, tried atomic.Int64
}

func (s *readCounter) Update(ctx context.Context, fn func(hub.Tx) error) error {
	return s.Store.Update(ctx, func(tx hub.Tx) error { return fn(readCountingTx{Tx: tx, s: s}) })
}

type readCountingTx struct {
	hub.Tx
	s *readCounter
}

func (t readCountingTx) LockClusters(ctx context.Context, names []string) ([]hub.ClusterRecord, error) {
	t.s.reads.Add(int64(len(names)))
	return t.Tx.LockClusters(ctx, names)
}

func (t readCountingTx) TouchUnchanged(ctx context.Context, clusters []string, hs []hub.Heartbeat) ([]bool, error) {
	t.s.tried.Add(int64(len(hs)))
	return t.Tx.(interface {
		TouchUnchanged(context.Context, []string, []hub.Heartbeat) ([]bool, error)
	}).TouchUnchanged(ctx, clusters, hs)
}

// TestHeartbeatsAreRecordedWithoutReadingTheCluster: a report that changes nothing sets the
// cluster's times without the cluster being read, a change is not tried as one (its digest is
// not the one the hub last committed), and every other report (a change, an older
// report, a cluster gone stale, a report after another of the same cluster in the batch) is
// decided as before, in the order it came.
func TestHeartbeatsAreRecordedWithoutReadingTheCluster(t *testing.T) {
	eachStore(t, testHeartbeatsAreRecordedWithoutReadingTheCluster)
}

func testHeartbeatsAreRecordedWithoutReadingTheCluster(t *testing.T, db hub.Store) {
	t.Helper()
	ctx := context.Background()
	store := &readCounter{Store: db}
	t0 := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	var clock atomic.Int64
	clock.Store(t0.UnixNano())
	now := func() time.Time { return time.Unix(0, clock.Load()).UTC() }
	seen := &results{}
	h := hub.New(store, hub.Options{SweepEvery: -1, StaleAfter: 10 * time.Minute, Now: now, Observer: seen})
	for _, name := range []string{"c1", "c2"} {
		if _, err := h.RegisterCluster(ctx, hub.Cluster{Name: name, Environment: "dev", ClusterType: "x"}, false); err != nil {
			t.Fatal(err)
		}
	}
	state := func(name, revision string, at time.Duration) hub.Report {
		return hub.Report{Cluster: name, Revision: revision, Status: hub.Compliant, ObservedAt: t0.Add(at)}
	}
	// commit commits reports in one batch; wantTried is how many are tried as heartbeats,
	// wantReads how many clusters are read.
	commit := func(want []string, wantTried, wantReads int64, reports ...hub.Report) {
		t.Helper()
		store.reads.Store(0)
		store.tried.Store(0)
		for i, err := range h.CommitReports(ctx, reports...) {
			if err != nil {
				t.Fatalf("report %d: %v", i, err)
			}
		}
		if got := seen.take(); !slices.Equal(got, want) {
			t.Errorf("results %v, want %v", got, want)
		}
		if got := store.tried.Load(); got != wantTried {
			t.Errorf("%d reports tried as heartbeats, want %d", got, wantTried)
		}
		if got := store.reads.Load(); got != wantReads {
			t.Errorf("%d clusters read, want %d", got, wantReads)
		}
	}
	observed := func(name string, want time.Duration) {
		t.Helper()
		d, err := h.Cluster(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		if !d.ObservedAt.Equal(t0.Add(want)) {
			t.Errorf("%s observed at %s, want %s", name, d.ObservedAt, t0.Add(want))
		}
	}

	commit([]string{hub.ResultAccepted, hub.ResultAccepted}, 0, 2, state("c1", "r1", 0), state("c2", "r1", 0))
	clock.Store(t0.Add(time.Minute).UnixNano())
	commit([]string{hub.ResultUnchanged, hub.ResultUnchanged}, 2, 0, state("c1", "r1", time.Second), state("c2", "r1", time.Second))
	observed("c1", time.Second)

	// An older heartbeat after a newer one: ignored, as before.
	commit([]string{hub.ResultUnchanged, hub.ResultIgnored}, 1, 1, state("c1", "r1", 3*time.Second), state("c1", "r1", 2*time.Second))
	observed("c1", 3*time.Second)

	// A change, then the state before it again, in one batch: both apply, in order.
	commit([]string{hub.ResultAccepted, hub.ResultAccepted}, 0, 1, state("c1", "r2", 4*time.Second), state("c1", "r1", 5*time.Second))
	events, err := h.History(ctx, hub.HistoryFilter{Cluster: "c1", Kind: string(hub.EventCluster)})
	if err != nil {
		t.Fatal(err)
	}
	var moves []string
	for _, e := range events {
		moves = append(moves, e.From+" -> "+e.To)
	}
	slices.Sort(moves)
	want := []string{" -> Compliant@r1", "Compliant@r1 -> Compliant@r2", "Compliant@r2 -> Compliant@r1"}
	if !slices.Equal(moves, want) {
		t.Errorf("c1's history %q, want %q", moves, want)
	}

	// A cluster gone stale comes back with a heartbeat's content: a change, read first.
	clock.Store(t0.Add(20 * time.Minute).UnixNano())
	if n, _, err := h.ExpireStaleDue(ctx); err != nil || n != 2 {
		t.Fatalf("expired %d, %v; want both clusters", n, err)
	}
	commit([]string{hub.ResultAccepted}, 1, 1, state("c2", "r1", 20*time.Minute))
	observed("c2", 20*time.Minute)
}

// TestHeartbeatAfterAReportBeyondTheSkew: a cluster whose stored report is dated beyond the
// allowed skew (stored before the hub bounded observedAt) takes a heartbeat observed before
// that date, as it takes any report (the stored date orders nothing), without being read.
func TestHeartbeatAfterAReportBeyondTheSkew(t *testing.T) {
	eachStore(t, testHeartbeatAfterAReportBeyondTheSkew)
}

func testHeartbeatAfterAReportBeyondTheSkew(t *testing.T, store hub.Store) {
	t.Helper()
	ctx := context.Background()
	t0 := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	now := func() time.Time { return t0 }
	seen, counted := &results{}, &readCounter{Store: store}
	h := hub.New(counted, hub.Options{SweepEvery: -1, Now: now, Observer: seen})
	if _, err := h.RegisterCluster(ctx, hub.Cluster{Name: "c1", Environment: "dev", ClusterType: "x"}, false); err != nil {
		t.Fatal(err)
	}
	commit := func(h *hub.Hub, at time.Time) {
		t.Helper()
		if err := h.CommitReports(ctx, hub.Report{Cluster: "c1", Revision: "r1", Status: hub.Compliant, ObservedAt: at})[0]; err != nil {
			t.Fatal(err)
		}
	}
	commit(h, t0.Add(-time.Minute))
	// A hub that took anything stores a heartbeat from next year.
	commit(hub.New(store, hub.Options{SweepEvery: -1, Now: now, MaxClockSkew: 100 * 365 * 24 * time.Hour}), t0.AddDate(1, 0, 0))
	seen.take()
	counted.reads.Store(0)
	commit(h, t0)
	if got := seen.take(); !slices.Equal(got, []string{hub.ResultUnchanged}) {
		t.Errorf("results %v, want the heartbeat recorded", got)
	}
	if n := counted.reads.Load(); n != 0 {
		t.Errorf("%d clusters read, want none", n)
	}
	if d, err := h.Cluster(ctx, "c1"); err != nil || !d.ObservedAt.Equal(t0) {
		t.Errorf("c1 observed at %s (%v), want %s", d.ObservedAt, err, t0)
	}
}

// TestABatchTakenIsCommittedAfterItsContextEnds: a writer that took a batch from the queue
// commits it although the hub is stopping (its context ended): its senders are waiting for
// it, and a report half-applied or refused at shutdown would be sent again for nothing.
func TestABatchTakenIsCommittedAfterItsContextEnds(t *testing.T) {
	eachStore(t, func(t *testing.T, store hub.Store) {
		t.Helper()
		h := hub.New(store, hub.Options{SweepEvery: -1})
		if _, err := h.RegisterCluster(t.Context(), hub.Cluster{Name: "c1", Environment: "dev", ClusterType: "x"}, false); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		r := hub.Report{Cluster: "c1", Revision: "r1", Status: hub.Compliant, ObservedAt: time.Now()}
		if err := h.CommitReports(ctx, r)[0]; err != nil {
			t.Fatalf("the report of a batch taken before the hub stopped: %v", err)
		}
		if d, err := h.Cluster(t.Context(), "c1"); err != nil || d.Revision != "r1" {
			t.Errorf("c1 is at %q (%v), want r1", d.Revision, err)
		}
	})
}
