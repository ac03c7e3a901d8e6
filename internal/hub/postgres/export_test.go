package postgres

import (
	"context"
	"fmt"
	"io/fs"
	"strconv"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/fleetform/fleetform/internal/hub"
	"github.com/fleetform/fleetform/internal/hub/migrate"
)

// MigrationCount is the number of embedded migrations.
func MigrationCount(t *testing.T) int {
	t.Helper()
	entries, err := fs.ReadDir(migrations, "migrations")
	if err != nil {
		t.Fatal(err)
	}
	return len(entries)
}

// HistoryPlans returns the plans (EXPLAIN (FORMAT JSON)) of the query History(f) runs, after
// ANALYZE: the custom plan for f's values, then the generic plan a prepared statement may
// switch to after a few runs (pgx prepares its statements).
func HistoryPlans(ctx context.Context, s *Store, f hub.HistoryFilter) ([]string, error) {
	sql, args := historyQuery(f)
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return nil, err
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, `ANALYZE events`); err != nil {
		return nil, err
	}
	return plans(ctx, conn.Conn(), sql, args)
}

// TokenPlans returns the custom and generic plans of the statements that read and delete a
// cluster's tokens, by name: "cluster" (Tokens of a cluster), "kind+cluster" (of a kind
// and a cluster) and "delete" (DeleteClusterTokens), with the table's statistics as they
// are (none right after a bulk registration, until autovacuum analyzes it).
func TokenPlans(ctx context.Context, s *Store) (map[string][]string, error) {
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return nil, err
	}
	defer conn.Release()
	byCluster, clusterArgs := tokensQuery(hub.TokenFilter{Cluster: "edge-1"})
	byBoth, bothArgs := tokensQuery(hub.TokenFilter{Kind: hub.TokenCluster, Cluster: "edge-1"})
	out := map[string][]string{}
	for name, q := range map[string]struct {
		sql  string
		args []any
	}{"cluster": {byCluster, clusterArgs}, "kind+cluster": {byBoth, bothArgs},
		"delete": {deleteClusterTokens, []any{"edge-1", hub.TokenCluster}}} {
		if out[name], err = plans(ctx, conn.Conn(), q.sql, q.args); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// plans returns the custom plan of sql for args, then its generic plan.
func plans(ctx context.Context, conn *pgx.Conn, sql string, args []any) ([]string, error) {
	var custom string
	if err := conn.QueryRow(ctx, `EXPLAIN (FORMAT JSON) `+sql, args...).Scan(&custom); err != nil {
		return nil, err
	}
	var generic string
	err := pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SET LOCAL plan_cache_mode = force_generic_plan`); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `PREPARE plan_of AS `+sql); err != nil {
			return err
		}
		// EXECUTE takes no bind parameters: the test's own values go in as literals.
		values := make([]string, len(args))
		for i, a := range args {
			values[i] = literal(a)
		}
		if err := tx.QueryRow(ctx, `EXPLAIN (FORMAT JSON) EXECUTE plan_of(`+strings.Join(values, ", ")+`)`).Scan(&generic); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `DEALLOCATE plan_of`)
		return err
	})
	return []string{custom, generic}, err
}

// literal is a SQL literal of a history query's argument (standard_conforming_strings).
func literal(v any) string {
	switch v := v.(type) {
	case time.Time:
		return "'" + v.Format(time.RFC3339Nano) + "'::timestamptz"
	case int:
		return strconv.Itoa(v)
	case string:
		return "'" + strings.ReplaceAll(v, "'", "''") + "'"
	}
	panic(fmt.Sprintf("literal of %T", v))
}

// MigrateTo brings the database at dsn to schema version (the migrations up to it) and runs
// stmts on it: a database as an older fleetform left it.
func MigrateTo(ctx context.Context, dsn string, version int, stmts ...string) error {
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return err
	}
	defer func() { _ = conn.Close(ctx) }()
	older := fstest.MapFS{}
	entries, err := fs.ReadDir(migrations, "migrations")
	if err != nil {
		return err
	}
	for _, e := range entries {
		if n, _ := strconv.Atoi(e.Name()[:4]); n <= version {
			data, err := fs.ReadFile(migrations, "migrations/"+e.Name())
			if err != nil {
				return err
			}
			older["migrations/"+e.Name()] = &fstest.MapFile{Data: data}
		}
	}
	if _, err := migrate.Run(ctx, migrator{conn}, older, "migrations"); err != nil {
		return err
	}
	for _, s := range stmts {
		if _, err := conn.Exec(ctx, s); err != nil {
			return err
		}
	}
	return nil
}

// LeaseBackendPID returns the server process of a lease's session.
func LeaseBackendPID(l hub.Lease) uint32 {
	c := l.(*lease)
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.conn.PgConn().PID()
}

// SettingsQuery reads jit and max_parallel_workers_per_gather as "<jit> <workers>".
const SettingsQuery = `SELECT current_setting('jit') || ' ' || current_setting('max_parallel_workers_per_gather')`

// SettingsInUpdate returns SettingsQuery's answer in a write transaction, and in a read.
func SettingsInUpdate(ctx context.Context, s *Store) (write, read string, err error) {
	const q = SettingsQuery
	err = s.Update(ctx, func(htx hub.Tx) error {
		return htx.(*tx).queryRow(ctx, q).Scan(&write)
	})
	if err != nil {
		return "", "", err
	}
	err = s.View(ctx, func(r hub.Reader) error {
		return r.(*tx).queryRow(ctx, q).Scan(&read)
	})
	return write, read, err
}
