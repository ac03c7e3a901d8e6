//go:build darwin || dragonfly || freebsd || linux || netbsd || openbsd

package sqlite_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fleetform/fleetform/internal/hub"
	"github.com/fleetform/fleetform/internal/hub/sqlite"
)

func openStore(t *testing.T, path string) *sqlite.Store {
	t.Helper()
	s, err := sqlite.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// lead calls TryLead, which must lead.
func lead(t *testing.T, s *sqlite.Store) hub.Lease {
	t.Helper()
	l, err := s.TryLead(context.Background(), "serve")
	if err != nil || l == nil {
		t.Fatalf("TryLead: %v, %v; want a lease", l, err)
	}
	t.Cleanup(func() { _ = l.Release(context.Background()) })
	return l
}

// mustNotLead calls TryLead, which must fail with hub.ErrLeaseHeld, naming the lock file.
func mustNotLead(t *testing.T, s *sqlite.Store, lockFile string) {
	t.Helper()
	l, err := s.TryLead(context.Background(), "serve")
	if l != nil || !errors.Is(err, hub.ErrLeaseHeld) || !strings.Contains(err.Error(), lockFile) {
		t.Fatalf("TryLead while another store holds the lease: %v, %v; want hub.ErrLeaseHeld naming %s", l, err, lockFile)
	}
}

// TestLeadershipOneProcessPerFile: while a store of a database file holds the lease, TryLead
// of another store of the same file (as another process would) fails with hub.ErrLeaseHeld;
// after Release it leads, and the released lease's Check fails.
func TestLeadershipOneProcessPerFile(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "hub.db")
	a, b := openStore(t, path), openStore(t, path)
	la := lead(t, a)
	mustNotLead(t, b, path+".serve.lock")
	mustNotLead(t, a, path+".serve.lock")
	if other, err := b.TryLead(ctx, "promote"); err != nil || other == nil {
		t.Errorf("a lease of another name: %v, %v; want it held", other, err)
	} else {
		_ = other.Release(ctx)
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
	lb := lead(t, b)
	if err := lb.Check(ctx); err != nil {
		t.Errorf("Check of the second store's lease: %v", err)
	}
	if _, err := b.TryLead(ctx, "../x"); hub.ErrorCode(err) != hub.CodeInvalid {
		t.Errorf("TryLead of a name that is not a file name: %v", err)
	}
}

// TestLeaseEndsWhenItsLockFileIsRemoved: a removed lock file could be created and locked
// again by another process, so the lease holding the old one is lost.
func TestLeaseEndsWhenItsLockFileIsRemoved(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "hub.db")
	a, b := openStore(t, path), openStore(t, path)
	la := lead(t, a)
	if err := os.Remove(path + ".serve.lock"); err != nil {
		t.Fatal(err)
	}
	lb := lead(t, b) // locks a new file of the same name
	if err := la.Check(ctx); err == nil {
		t.Error("Check of the lease whose lock file was removed succeeded")
	}
	if err := lb.Check(ctx); err != nil {
		t.Errorf("Check of the lease on the new file: %v", err)
	}
}
