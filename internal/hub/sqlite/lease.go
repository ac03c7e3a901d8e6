package sqlite

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"

	"github.com/fleetform/fleetform/internal/hub"
)

var _ hub.Leadership = (*Store)(nil)

// TryLead locks the file DBFILE.NAME.lock (created next to the database, never removed) and
// returns the lock as a lease. SQLite allows one process per database file: while another
// process (or another Store of this one) holds the lease, TryLead returns an error matching
// hub.ErrLeaseHeld, naming the file, not (nil, nil). The lock is the operating system's
// (flock): it ends with the process, however it ends. Where flock is not available, TryLead
// always leads: run one process per database file.
func (s *Store) TryLead(_ context.Context, name string) (hub.Lease, error) {
	if err := hub.CheckLeaseName(name); err != nil {
		return nil, err
	}
	path := s.path + "." + name + ".lock"
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("sqlite: leadership %q: %w", name, err)
	}
	held, err := tryLockFile(f)
	switch {
	case err != nil:
		return nil, errors.Join(fmt.Errorf("sqlite: lock %s: %w", path, err), f.Close())
	case !held:
		return nil, errors.Join(fmt.Errorf("sqlite: %s is locked by another process: %w", path, hub.ErrLeaseHeld), f.Close())
	}
	return &lease{f: f, path: path}, nil
}

// lease is a locked file.
type lease struct {
	mu   sync.Mutex
	f    *os.File // nil once released or lost
	path string
}

// Check fails once the lease was released, or when its lock file was removed or replaced
// (another process could lock the new file): the lease ends then.
func (l *lease) Check(context.Context) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return fmt.Errorf("sqlite: the lease on %s was released or lost", l.path)
	}
	held, err := l.f.Stat()
	if err == nil {
		var named os.FileInfo
		if named, err = os.Stat(l.path); err == nil && !os.SameFile(held, named) {
			err = errors.New("the file was replaced")
		}
	}
	if err == nil {
		return nil
	}
	_ = l.f.Close()
	l.f = nil
	return fmt.Errorf("sqlite: the lease on %s is lost: %w", l.path, err)
}

// Release unlocks the file (closing it releases the lock at once). The file stays: removing
// it could let two processes lock two files of the same name.
func (l *lease) Release(context.Context) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return nil
	}
	err := l.f.Close()
	l.f = nil
	return err
}
