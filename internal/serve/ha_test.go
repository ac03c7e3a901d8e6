package serve

import (
	"context"
	"testing"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/jackc/pgx/v5"

	"github.com/fleetform/fleetform/internal/controlplane"
	"github.com/fleetform/fleetform/internal/fleet"
	"github.com/fleetform/fleetform/internal/hub"
	"github.com/fleetform/fleetform/internal/hub/postgres"
	"github.com/fleetform/fleetform/internal/testutil/pgtest"
)

// replica is one serve process on a shared PostgreSQL database.
type replica struct {
	svc   *Service
	lease hub.Lease
}

// step is one turn of a replica's loop: keep or take the leadership, and work when leading.
func (r *replica) step(t *testing.T) {
	t.Helper()
	var err error
	if r.lease, err = r.svc.lead(t.Context(), r.lease); err != nil {
		t.Fatal(err)
	}
	if r.svc.Leading() {
		r.svc.round(t.Context(), map[string]bool{})
	}
}

// TestReplicasOnPostgreSQL: several replicas on one PostgreSQL database, all running their
// loop; exactly one writes (a change makes exactly one commit), and when the leader's
// process dies (its database session ends) another takes over at its next turn, within one
// interval, and writes the next change once.
func TestReplicasOnPostgreSQL(t *testing.T) {
	dsn := pgtest.NewDatabase(t)
	f := newFixture(t)
	replicas := make([]*replica, 3)
	for i := range replicas {
		store, err := postgres.Open(t.Context(), dsn, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = store.Close() })
		h := hub.New(store, hub.Options{Now: f.clock.Now})
		replicas[i] = &replica{svc: New(Options{Fleet: fleet.New(fleet.Config{ControlPlane: f.cp.Dir,
			Read: controlplane.Options{RepoMap: controlplane.RepoMap{f.appsURL: f.apps.Dir}}, CacheDir: t.TempDir(), Hub: fleet.LocalHub(h)}),
			Interval: interval, Hub: h, Leadership: store, Now: f.clock.Now})}
	}
	turn := func() {
		f.clock.Advance(interval)
		for _, r := range replicas {
			r.step(t)
		}
	}
	turn()
	leaders := 0
	for _, r := range replicas {
		if r.svc.Leading() {
			leaders++
		}
	}
	if leaders != 1 || !replicas[0].svc.Leading() {
		t.Fatalf("%d leaders, want one: the first to try", leaders)
	}
	if n := commitCount(t, f, "dev"); n != 1 {
		t.Fatalf("dev has %d commits after the start, want 1", n)
	}

	f.commit(map[string]string{"environments/dev/config.yaml": configMap("dev-config", "LOG_LEVEL", "debug")})
	turn()
	turn()
	if n := commitCount(t, f, "dev"); n != 2 {
		t.Errorf("dev has %d commits after one change and every replica's turns, want 2", n)
	}

	// The leader's process dies: its session ends, and it takes no more turns.
	terminateLeaseSessions(t, dsn)
	replicas = replicas[1:]
	turn()
	var next *replica
	for _, r := range replicas {
		if r.svc.Leading() {
			if next != nil {
				t.Fatal("two replicas lead")
			}
			next = r
		}
	}
	if next == nil {
		t.Fatal("no replica took over")
	}
	f.commit(map[string]string{"environments/dev/config.yaml": configMap("dev-config", "LOG_LEVEL", "warn")})
	turn()
	turn()
	if n := commitCount(t, f, "dev"); n != 3 {
		t.Errorf("dev has %d commits after the takeover and one more change, want 3", n)
	}
}

// commitCount counts the commits of a GitOps branch (read afresh: the git CLI wrote them).
func commitCount(t *testing.T, f *fixture, branch string) int {
	t.Helper()
	g, err := git.PlainOpen(f.gitops.Dir)
	if err != nil {
		t.Fatal(err)
	}
	ref, err := g.Reference(plumbing.NewBranchReferenceName(branch), true)
	if err != nil {
		t.Fatal(err)
	}
	iter, err := g.Log(&git.LogOptions{From: ref.Hash()})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	_ = iter.ForEach(func(*object.Commit) error { n++; return nil })
	return n
}

// terminateLeaseSessions ends the database sessions that hold advisory locks (the leader's
// lease), as a crash of its process would, and waits until the server ended them.
func terminateLeaseSessions(t *testing.T, dsn string) {
	t.Helper()
	conn, err := pgx.Connect(t.Context(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = conn.Close(context.WithoutCancel(t.Context())) }()
	rows, err := conn.Query(t.Context(),
		`SELECT pg_terminate_backend(pid, 60000) FROM pg_locks WHERE locktype = 'advisory' AND granted AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for rows.Next() {
		n++
	}
	if rows.Err() != nil || n != 1 {
		t.Fatalf("terminated %d lease session(s) (%v), want 1", n, rows.Err())
	}
}
