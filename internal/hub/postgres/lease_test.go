package postgres_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/fleetform/fleetform/internal/hub"
	"github.com/fleetform/fleetform/internal/hub/postgres"
	"github.com/fleetform/fleetform/internal/testutil/pgtest"
)

// tryLead calls TryLead and fails the test on an error.
func tryLead(t *testing.T, s *postgres.Store, name string) hub.Lease {
	t.Helper()
	l, err := s.TryLead(context.Background(), name)
	if err != nil {
		t.Fatalf("TryLead(%q): %v", name, err)
	}
	if l != nil {
		t.Cleanup(func() { _ = l.Release(context.Background()) })
	}
	return l
}

// TestLeadershipOneAtATime: of two stores on one database (two replicas), one leads; the
// other leads once the first releases its lease, and the released lease's Check fails.
func TestLeadershipOneAtATime(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dsn := pgtest.NewDatabase(t)
	a, b := open(t, dsn), open(t, dsn)
	la := tryLead(t, a, "serve")
	if la == nil {
		t.Fatal("the first TryLead did not lead")
	}
	if lb := tryLead(t, b, "serve"); lb != nil {
		t.Fatal("a second replica leads while the first holds the lease")
	}
	if again := tryLead(t, a, "serve"); again != nil {
		t.Fatal("a second TryLead of the leading replica leads too")
	}
	if other := tryLead(t, b, "promote"); other == nil {
		t.Error("a lease of another name is held by the same lock")
	}
	if err := la.Check(ctx); err != nil {
		t.Fatalf("Check of the held lease: %v", err)
	}
	if err := la.Release(ctx); err != nil {
		t.Fatalf("Release: %v", err)
	}
	if err := la.Check(ctx); err == nil {
		t.Error("Check of a released lease succeeded")
	}
	lb := tryLead(t, b, "serve")
	if lb == nil {
		t.Fatal("the second replica does not lead after the first released the lease")
	}
	if err := lb.Check(ctx); err != nil {
		t.Errorf("Check of the second replica's lease: %v", err)
	}
	if la := tryLead(t, a, "serve"); la != nil {
		t.Error("the first replica leads again while the second holds the lease")
	}
}

// TestLeadershipAfterSessionKilled: when the leader's session is terminated, the other
// replica leads on its next TryLead, and the old leader's Check fails.
func TestLeadershipAfterSessionKilled(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dsn := pgtest.NewDatabase(t)
	a, b := open(t, dsn), open(t, dsn)
	la := tryLead(t, a, "serve")
	if la == nil {
		t.Fatal("the first TryLead did not lead")
	}
	if lb := tryLead(t, b, "serve"); lb != nil {
		t.Fatal("a second replica leads while the first holds the lease")
	}
	admin, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = admin.Close(ctx) }()
	var gone bool
	// With a timeout, pg_terminate_backend waits for the backend to exit (its locks released
	// first) and answers whether it did within that time.
	if err := admin.QueryRow(ctx, `SELECT pg_terminate_backend($1, 60000)`, int64(postgres.LeaseBackendPID(la))).Scan(&gone); err != nil || !gone {
		t.Fatalf("terminating the leader's session: %v, %v", gone, err)
	}
	lb := tryLead(t, b, "serve")
	if lb == nil {
		t.Fatal("the second replica does not lead after the leader's session was terminated")
	}
	if err := la.Check(ctx); err == nil {
		t.Error("Check of the lease whose session was terminated succeeded")
	}
	if err := lb.Check(ctx); err != nil {
		t.Errorf("Check of the new leader's lease: %v", err)
	}
	if err := la.Release(ctx); err != nil {
		t.Errorf("Release of the lost lease: %v", err)
	}
}
