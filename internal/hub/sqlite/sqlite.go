// Package sqlite is the hub's store on SQLite (modernc.org/sqlite, pure Go): the embedded
// default. It keeps one write connection (SQLite has a single writer; the hub groups reports
// into few transactions) and a pool of readers, in WAL mode with synchronous=FULL, so that a
// committed transaction survives a crash of the process or of the machine. TryLead keeps a
// second process off the file: it locks DBFILE.NAME.lock for the process's lifetime.
package sqlite

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"net/url"
	"runtime"
	"strings"

	_ "modernc.org/sqlite" // the database/sql driver "sqlite"

	"github.com/fleetform/fleetform/internal/hub"
	"github.com/fleetform/fleetform/internal/hub/migrate"
)

//go:embed migrations/*.sql
var migrations embed.FS

// Store is the SQLite store.
type Store struct {
	path  string
	write *sql.DB
	read  *sql.DB
	// The queries are constant strings (a bounded set): each is prepared once per pool.
	writeStmts, readStmts *stmtCache
}

var _ hub.Store = (*Store)(nil)

// Open opens (creating it if needed) the database file at path and applies the migrations.
func Open(ctx context.Context, path string) (*Store, error) {
	dsn := func(txlock string) string {
		q := url.Values{}
		for _, p := range []string{"journal_mode(WAL)", "synchronous(FULL)", "busy_timeout(10000)", "foreign_keys(OFF)"} {
			q.Add("_pragma", p)
		}
		q.Set("_txlock", txlock)
		return "file:" + path + "?" + q.Encode()
	}
	write, err := sql.Open("sqlite", dsn("immediate"))
	if err != nil {
		return nil, err
	}
	write.SetMaxOpenConns(1)
	read, err := sql.Open("sqlite", dsn("deferred"))
	if err != nil {
		_ = write.Close()
		return nil, err
	}
	// Every reader stays open between reads: a connection closed when more than the default
	// two are idle would be opened again (its pragmas, its prepared statements) for the next
	// read, and token lookups come in bursts.
	readers := max(4, runtime.GOMAXPROCS(0))
	read.SetMaxOpenConns(readers)
	read.SetMaxIdleConns(readers)
	s := &Store{path: path, write: write, read: read, writeStmts: newStmtCache(write), readStmts: newStmtCache(read)}
	if _, err := migrate.Run(ctx, migrator{write}, migrations, "migrations"); err != nil {
		_ = s.Close()
		return nil, fmt.Errorf("migrate %s: %w", path, err)
	}
	return s, nil
}

// Close closes the database.
func (s *Store) Close() error {
	s.writeStmts.close()
	s.readStmts.close()
	return errors.Join(s.write.Close(), s.read.Close())
}

// Update runs fn in a write transaction (BEGIN IMMEDIATE).
func (s *Store) Update(ctx context.Context, fn func(hub.Tx) error) error {
	defer s.writeStmts.preparePending(ctx)
	sqlTx, err := s.write.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	if err := fn(&tx{q: &cachedTx{tx: sqlTx, cache: s.writeStmts, stmts: map[string]*sql.Stmt{}}}); err != nil {
		return errors.Join(err, ignoreDone(sqlTx.Rollback()))
	}
	return sqlTx.Commit()
}

// View runs fn in a read transaction (a consistent snapshot).
func (s *Store) View(ctx context.Context, fn func(hub.Reader) error) error {
	defer s.readStmts.preparePending(ctx)
	sqlTx, err := s.read.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return err
	}
	defer func() { _ = sqlTx.Rollback() }()
	return fn(&tx{q: &cachedTx{tx: sqlTx, cache: s.readStmts, stmts: map[string]*sql.Stmt{}}})
}

func ignoreDone(err error) error {
	if errors.Is(err, sql.ErrTxDone) {
		return nil
	}
	return err
}

// migrator applies migrations on the write connection.
type migrator struct{ db *sql.DB }

func (m migrator) Applied(ctx context.Context) (map[int]bool, error) {
	if _, err := m.db.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL DEFAULT (datetime('now')))`); err != nil {
		return nil, err
	}
	rows, err := m.db.QueryContext(ctx, `SELECT version FROM schema_migrations`)
	if err != nil {
		return nil, err
	}
	defer func() { _ = rows.Close() }()
	out := map[int]bool{}
	for rows.Next() {
		var v int
		if err := rows.Scan(&v); err != nil {
			return nil, err
		}
		out[v] = true
	}
	return out, rows.Err()
}

func (m migrator) Apply(ctx context.Context, version int, name, script string) error {
	t, err := m.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	for _, stmt := range splitStatements(script) {
		if _, err := t.ExecContext(ctx, stmt); err != nil {
			_ = t.Rollback()
			return fmt.Errorf("%w\n%s", err, stmt)
		}
	}
	if _, err := t.ExecContext(ctx, `INSERT INTO schema_migrations (version, name) VALUES (?, ?)`, version, name); err != nil {
		_ = t.Rollback()
		return err
	}
	return t.Commit()
}

// splitStatements splits a migration on ";" at the end of a line, dropping comments.
func splitStatements(script string) []string {
	var out []string
	var cur strings.Builder
	for _, line := range strings.Split(script, "\n") {
		if t := strings.TrimSpace(line); t == "" || strings.HasPrefix(t, "--") {
			continue
		}
		cur.WriteString(line)
		cur.WriteByte('\n')
		if strings.HasSuffix(strings.TrimSpace(line), ";") {
			out = append(out, cur.String())
			cur.Reset()
		}
	}
	if strings.TrimSpace(cur.String()) != "" {
		out = append(out, cur.String())
	}
	return out
}
