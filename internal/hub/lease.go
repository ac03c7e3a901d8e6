package hub

import (
	"context"
	"errors"
)

// Leadership elects one leader among the processes that share a store.
type Leadership interface {
	// TryLead returns a held lease when this process leads now, or (nil, nil) when another does.
	TryLead(ctx context.Context, name string) (Lease, error)
}

// Lease is held leadership.
type Lease interface {
	// Check returns an error once the lease no longer holds (e.g. its database connection
	// died); serve calls it before every round of writes. After an error the lease is over:
	// lead again only through TryLead.
	Check(ctx context.Context) error
	// Release gives the lease up.
	Release(ctx context.Context) error
}

// ErrLeaseHeld is what TryLead returns, instead of (nil, nil), from a store on which one
// process only may run (SQLite: one fleetform serve per database file) while another
// process holds the lease: such a process cannot follow, it must stop.
var ErrLeaseHeld = errors.New("another process leads on this store, and the store allows one process only")

// CheckLeaseName returns an error unless name may name a lease: 1 to 63 lowercase letters,
// digits and '-' (stores use it in lock names and file names).
func CheckLeaseName(name string) error {
	if name == "" || len(name) > 63 {
		return Errorf(CodeInvalid, "lease name %q: use 1 to 63 lowercase letters, digits and '-'", name)
	}
	for _, r := range name {
		if (r < 'a' || r > 'z') && (r < '0' || r > '9') && r != '-' {
			return Errorf(CodeInvalid, "lease name %q: use 1 to 63 lowercase letters, digits and '-'", name)
		}
	}
	return nil
}
