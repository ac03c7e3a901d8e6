// Package postgres is the hub's store on PostgreSQL (jackc/pgx/v5), for scale and for several
// hub replicas sharing one database.
//
// Writes run at READ COMMITTED and serialise where the hub asks them to: environments with
// transaction-scoped advisory locks (shared for ingest and sweeps, exclusive for a new desired
// state) and clusters with SELECT … FOR UPDATE. Within a transaction, writes are queued and
// sent in one round trip before the next read or the commit, and counter deltas are summed and
// applied at commit in key order, so that concurrent writers hold counter rows only briefly
// and always lock them in the same order. A transaction that still fails with a serialization
// failure or a deadlock is retried. Reads run in READ ONLY REPEATABLE READ transactions (one
// snapshot). Every statement is parameterised.
//
// TryLead elects one leader among the processes sharing the database: a session-level advisory
// lock held on a connection of its own, outside the pool, for as long as that session lives.
package postgres

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/fleetform/fleetform/internal/hub"
	"github.com/fleetform/fleetform/internal/hub/migrate"
)

//go:embed migrations/*.sql
var migrations embed.FS

// Advisory lock classes (the first key of pg_advisory_*_lock(int, int)).
const (
	lockClassMigrate     = 0x66660001
	lockClassEnvironment = 0x66660002
	lockClassLeader      = 0x66660003
)

// defaultMaxConns is the pool size when the DSN sets no pool_max_conns: ingest writers, reads
// and the staleness sweep each hold a connection while they run.
const defaultMaxConns = 8

// maxAttempts bounds how often a write transaction is retried after a serialization failure
// or a deadlock.
const maxAttempts = 8

// Store is the PostgreSQL store.
type Store struct {
	pool   *pgxpool.Pool
	logger *slog.Logger
}

var _ hub.Store = (*Store)(nil)

// Open connects to the database at dsn (a postgres:// URL or key=value string; pgxpool
// settings such as pool_max_conns may be added, the default pool has at least 8 connections) and applies the migrations. Hub replicas may
// open the same database at once: migrations run under an advisory lock.
func Open(ctx context.Context, dsn string, logger *slog.Logger) (*Store, error) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("postgres: parse DSN: %w", err)
	}
	if !strings.Contains(dsn, "pool_max_conns") {
		cfg.MaxConns = max(cfg.MaxConns, defaultMaxConns)
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("postgres: connect: %w", err)
	}
	s := &Store{pool: pool, logger: logger}
	if err := s.migrate(ctx); err != nil {
		pool.Close()
		return nil, err
	}
	return s, nil
}

func (s *Store) migrate(ctx context.Context) error {
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("postgres: connect: %w", err)
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock($1, 0)`, lockClassMigrate); err != nil {
		return fmt.Errorf("postgres: lock migrations: %w", err)
	}
	defer func() {
		// A failed unlock means a broken session, and closing it releases the lock too.
		_, _ = conn.Exec(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock($1, 0)`, lockClassMigrate)
	}()
	applied, err := migrate.Run(ctx, migrator{conn.Conn()}, migrations, "migrations")
	if err != nil {
		return fmt.Errorf("postgres: migrate: %w", err)
	}
	if len(applied) > 0 {
		s.logger.InfoContext(ctx, "applied hub schema migrations", "versions", applied)
	}
	return nil
}

// Close closes the connection pool.
func (s *Store) Close() error {
	s.pool.Close()
	return nil
}

// Update runs fn in a READ COMMITTED transaction, retrying it (with a short random backoff)
// when PostgreSQL reports a serialization failure or a deadlock.
func (s *Store) Update(ctx context.Context, fn func(hub.Tx) error) error {
	for attempt := 1; ; attempt++ {
		err := s.update(ctx, fn)
		if err == nil || !retryable(err) || attempt == maxAttempts {
			return err
		}
		s.logger.DebugContext(ctx, "retrying a hub transaction", "attempt", attempt, "error", err.Error())
		backoff := time.Duration(rand.Int64N(int64(time.Millisecond) << min(attempt, 6))) //nolint:gosec // retry backoff jitter; nothing secret depends on it
		select {
		case <-time.After(backoff):
		case <-ctx.Done():
			return errors.Join(err, ctx.Err())
		}
	}
}

// noParallelWorkers and noJIT turn off parallel workers and JIT compilation for the rest
// of a write transaction. Its statements read and write a few rows per cluster by key, each
// in well under a millisecond, and would only pay those features' start-up; but a planner
// without statistics (a bulk registration not analyzed yet, or a server with autovacuum
// off) takes them for scans of millions of rows, and would start parallel workers, each
// loading the JIT compiler, for every batch of reports. Reads (View) keep the server's
// settings.
const (
	noParallelWorkers = `SET LOCAL max_parallel_workers_per_gather = 0`
	noJIT             = `SET LOCAL jit = off`
)

// update runs fn in one transaction on a pooled connection. BEGIN is queued ahead of the
// transaction's first statement and COMMIT behind its last writes, so a transaction costs no
// round trips of its own. A connection released inside a transaction (an error) is closed
// by the pool, which ends the transaction.
func (s *Store) update(ctx context.Context, fn func(hub.Tx) error) error {
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return err
	}
	defer conn.Release()
	t := newTx(conn, true)
	t.txStatus = conn.Conn().PgConn().TxStatus
	t.queue(`BEGIN ISOLATION LEVEL READ COMMITTED`)
	t.queue(noParallelWorkers)
	t.queue(noJIT)
	if err := fn(t); err != nil {
		return errors.Join(err, rollbackConn(ctx, conn))
	}
	if err := t.commit(ctx); err != nil {
		return errors.Join(err, rollbackConn(ctx, conn))
	}
	return nil
}

// rollbackConn ends a failed transaction on conn, if one is open.
func rollbackConn(ctx context.Context, conn *pgxpool.Conn) error {
	if conn.Conn().PgConn().TxStatus() == 'I' {
		return nil
	}
	_, err := conn.Exec(context.WithoutCancel(ctx), `ROLLBACK`)
	return err
}

// View runs fn in a read-only transaction on one snapshot, on a pooled connection. BEGIN
// is queued ahead of fn's first statement, as in update, so a read of one statement (a
// token lookup) costs two round trips, not three. A failed ROLLBACK is not fn's error: the
// pool closes a connection released inside a transaction.
func (s *Store) View(ctx context.Context, fn func(hub.Reader) error) error {
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return err
	}
	defer conn.Release()
	t := newTx(conn, false)
	t.queue(`BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY`)
	err = fn(t)
	_ = rollbackConn(ctx, conn)
	return err
}

// retryable reports whether err is a serialization failure or a deadlock.
func retryable(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && (pgErr.Code == "40001" || pgErr.Code == "40P01")
}

// migrator applies migrations on one connection.
type migrator struct{ conn *pgx.Conn }

func (m migrator) Applied(ctx context.Context) (map[int]bool, error) {
	if _, err := m.conn.Exec(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`); err != nil {
		return nil, err
	}
	rows, err := m.conn.Query(ctx, `SELECT version FROM schema_migrations`)
	if err != nil {
		return nil, err
	}
	versions, err := pgx.CollectRows(rows, pgx.RowTo[int])
	if err != nil {
		return nil, err
	}
	out := make(map[int]bool, len(versions))
	for _, v := range versions {
		out[v] = true
	}
	return out, nil
}

// Apply runs a migration script (several statements, simple protocol) and records it, in one
// transaction.
func (m migrator) Apply(ctx context.Context, version int, name, script string) error {
	return pgx.BeginFunc(ctx, m.conn, func(t pgx.Tx) error {
		if _, err := t.Exec(ctx, script); err != nil {
			return err
		}
		_, err := t.Exec(ctx, `INSERT INTO schema_migrations (version, name) VALUES ($1, $2)`, version, name)
		return err
	})
}
