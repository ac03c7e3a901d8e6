package postgres

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/jackc/pgx/v5"

	"github.com/fleetform/fleetform/internal/hub"
)

var _ hub.Leadership = (*Store)(nil)

// errReleased is what a released lease's Check returns.
var errReleased = errors.New("the lease was released or lost")

// TryLead takes the session-level advisory lock of name (pg_try_advisory_lock on a key
// derived from it) on a connection of its own, outside the pool, and returns it as a lease;
// (nil, nil) when another session holds it, in this process or another. The lock lasts as
// long as that connection: closing it, or the session's end (a dead network, a terminated
// backend), releases it, and another replica's next TryLead takes it.
func (s *Store) TryLead(ctx context.Context, name string) (hub.Lease, error) {
	if err := hub.CheckLeaseName(name); err != nil {
		return nil, err
	}
	conn, err := pgx.ConnectConfig(ctx, s.pool.Config().ConnConfig)
	if err != nil {
		return nil, fmt.Errorf("postgres: connect for leadership %q: %w", name, err)
	}
	var held bool
	if err := conn.QueryRow(ctx, `SELECT pg_try_advisory_lock($1, hashtext($2))`, lockClassLeader, name).Scan(&held); err != nil {
		return nil, errors.Join(fmt.Errorf("postgres: try leadership %q: %w", name, err), conn.Close(context.WithoutCancel(ctx)))
	}
	if !held {
		return nil, conn.Close(ctx)
	}
	return &lease{conn: conn, name: name}, nil
}

// lease is a held advisory lock and its connection.
type lease struct {
	mu   sync.Mutex // a pgx.Conn serves one caller at a time
	conn *pgx.Conn  // nil once released or lost
	name string
}

// Check asks the lease's session whether it still holds the lock. Any failure (the session
// is gone, or ctx ended first) ends the lease: its connection is closed, so that a lease
// whose state is unknown is never held on.
func (l *lease) Check(ctx context.Context) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.conn == nil {
		return fmt.Errorf("postgres: leadership %q: %w", l.name, errReleased)
	}
	var held bool
	err := l.conn.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND pid = pg_backend_pid()
		AND classid = $1::int4::oid AND objid = hashtext($2)::oid AND objsubid = 2 AND granted)`, lockClassLeader, l.name).Scan(&held)
	if err == nil && held {
		return nil
	}
	if err == nil {
		err = errors.New("its session no longer holds the lock")
	}
	_ = l.conn.Close(context.WithoutCancel(ctx)) // the lock goes with the session
	l.conn = nil
	return fmt.Errorf("postgres: leadership %q lost: %w", l.name, err)
}

// Release unlocks and closes the lease's connection. With ctx cancelled the unlock fails
// and the server releases the lock once it sees the connection closed.
func (l *lease) Release(ctx context.Context) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.conn == nil {
		return nil
	}
	conn := l.conn
	l.conn = nil
	_, err := conn.Exec(ctx, `SELECT pg_advisory_unlock($1, hashtext($2))`, lockClassLeader, l.name)
	if err != nil {
		err = fmt.Errorf("postgres: release leadership %q: %w", l.name, err)
	}
	return errors.Join(err, conn.Close(context.WithoutCancel(ctx)))
}
