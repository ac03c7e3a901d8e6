package sqlite

import (
	"context"
	"database/sql"
	"io/fs"
	"strconv"
	"testing/fstest"

	"github.com/fleetform/fleetform/internal/hub"
	"github.com/fleetform/fleetform/internal/hub/migrate"
)

// HistoryPlan returns the EXPLAIN QUERY PLAN rows (their detail column) of the query
// History(f) runs.
func HistoryPlan(ctx context.Context, s *Store, f hub.HistoryFilter) ([]string, error) {
	q, args := historyQuery(f)
	return explain(ctx, s, q, args...)
}

// TokenPlans returns the EXPLAIN QUERY PLAN rows of the token lookups, by name: "hash"
// (Token), "id" (TokenByID), "kind" and "cluster" (Tokens of a kind, of a cluster),
// "kind+cluster" (both) and "delete" (DeleteClusterTokens).
func TokenPlans(ctx context.Context, s *Store) (map[string][]string, error) {
	byKind, kindArgs := tokensQuery(hub.TokenFilter{Kind: hub.TokenRead})
	byCluster, clusterArgs := tokensQuery(hub.TokenFilter{Cluster: "edge-1"})
	byBoth, bothArgs := tokensQuery(hub.TokenFilter{Kind: hub.TokenCluster, Cluster: "edge-1"})
	out := map[string][]string{}
	for name, q := range map[string]struct {
		sql  string
		args []any
	}{"hash": {tokenByHash, []any{[]byte("h")}}, "id": {tokenByID, []any{"0"}}, "kind": {byKind, kindArgs}, "cluster": {byCluster, clusterArgs},
		"kind+cluster": {byBoth, bothArgs}, "delete": {deleteClusterTokens, []any{"edge-1", hub.TokenCluster}}} {
		rows, err := explain(ctx, s, q.sql, q.args...)
		if err != nil {
			return nil, err
		}
		out[name] = rows
	}
	return out, nil
}

func explain(ctx context.Context, s *Store, q string, args ...any) ([]string, error) {
	rows, err := s.read.QueryContext(ctx, `EXPLAIN QUERY PLAN `+q, args...)
	if err != nil {
		return nil, err
	}
	defer func() { _ = rows.Close() }()
	var out []string
	for rows.Next() {
		var id, parent, unused int
		var detail string
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			return nil, err
		}
		out = append(out, detail)
	}
	return out, rows.Err()
}

// MigrateTo creates the database at path at schema version (the migrations up to it) and
// runs stmts on it: a database as an older fleetform left it.
func MigrateTo(ctx context.Context, path string, version int, stmts ...string) error {
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		return err
	}
	defer func() { _ = db.Close() }()
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
	if _, err := migrate.Run(ctx, migrator{db}, older, "migrations"); err != nil {
		return err
	}
	for _, s := range stmts {
		if _, err := db.ExecContext(ctx, s); err != nil {
			return err
		}
	}
	return nil
}
