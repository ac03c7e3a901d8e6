package postgres_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/fleetform/fleetform/internal/hub"
	"github.com/fleetform/fleetform/internal/hub/postgres"
	"github.com/fleetform/fleetform/internal/testutil/pgtest"
	"github.com/fleetform/fleetform/internal/testutil/storetest"
)

func open(tb testing.TB, dsn string) *postgres.Store {
	tb.Helper()
	s, err := postgres.Open(context.Background(), dsn, nil)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = s.Close() })
	return s
}

func TestConformance(t *testing.T) {
	t.Parallel()
	storetest.Run(t, func(t *testing.T) (hub.Store, func() hub.Store) {
		t.Helper()
		dsn := pgtest.NewDatabase(t)
		return open(t, dsn), func() hub.Store { return open(t, dsn) }
	}, explain)
}

// TestLegacyTokens upgrades a database of schema version 6, with tokens stored before they
// could be revoked, to the current schema.
func TestLegacyTokens(t *testing.T) {
	t.Parallel()
	dsn := pgtest.NewDatabase(t)
	var rows []string
	for _, lt := range storetest.LegacyTokens {
		rows = append(rows, fmt.Sprintf(`INSERT INTO tokens (hash, kind, cluster, name, created_at) VALUES (decode('%x', 'hex'), '%s', '', '%s', now())`,
			hub.HashToken(lt.Secret), lt.Kind, lt.Name))
	}
	if err := postgres.MigrateTo(context.Background(), dsn, 6, rows...); err != nil {
		t.Fatal(err)
	}
	storetest.CheckLegacyTokens(t, open(t, dsn))
}

// TestTokenPlans: a cluster's tokens are read and deleted through tokens_cluster, in the
// custom and the generic plan, with no statistics on the table (right after a bulk
// registration, before autovacuum analyzes it) and after ANALYZE. Reading tokens_kind
// instead (every cluster token has the kind "cluster") makes a rotation read every token.
func TestTokenPlans(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dsn := pgtest.NewDatabase(t)
	s := open(t, dsn)
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = conn.Close(ctx) }()
	for _, stmt := range []string{
		`ALTER TABLE tokens SET (autovacuum_enabled = false)`, // no ANALYZE behind the test's back
		`INSERT INTO tokens (id, hash, kind, cluster, created_at)
			SELECT 'c' || i, sha256(('c' || i)::bytea), 'cluster', 'edge-' || i, now() FROM generate_series(1, 50000) AS i`,
		`INSERT INTO tokens (id, hash, kind, name, created_at) VALUES ('a', 'a', 'admin', 'admin', now())`,
	} {
		if _, err := conn.Exec(ctx, stmt); err != nil {
			t.Fatal(err)
		}
	}
	for _, analyzed := range []bool{false, true} {
		if analyzed {
			if _, err := conn.Exec(ctx, `ANALYZE tokens`); err != nil {
				t.Fatal(err)
			}
		}
		plans, err := postgres.TokenPlans(ctx, s)
		if err != nil {
			t.Fatal(err)
		}
		for name, texts := range plans {
			for i, text := range texts {
				kind := []string{"custom", "generic"}[i]
				indexes, seq := planIndexes(t, text, "tokens")
				if seq || !slices.Equal(indexes, []string{"tokens_cluster"}) {
					t.Errorf("tokens by %s, %s plan (analyzed: %v): indexes %v, seq scan %v, want tokens_cluster alone:\n%s",
						name, kind, analyzed, indexes, seq, text)
				}
			}
		}
	}
}

// planIndexes returns the indexes a plan (EXPLAIN (FORMAT JSON)) reads, and whether it
// scans the table.
func planIndexes(t *testing.T, text, table string) (indexes []string, seq bool) {
	t.Helper()
	var doc []struct {
		Plan planNode `json:"Plan"`
	}
	if err := json.Unmarshal([]byte(text), &doc); err != nil {
		t.Fatal(err)
	}
	var walk func(n planNode)
	walk = func(n planNode) {
		if n.NodeType == "Seq Scan" && n.RelationName == table {
			seq = true
		}
		if n.IndexName != "" && !slices.Contains(indexes, n.IndexName) {
			indexes = append(indexes, n.IndexName)
		}
		for _, c := range n.Plans {
			walk(c)
		}
	}
	for _, d := range doc {
		walk(d.Plan)
	}
	return indexes, seq
}

// planNode is a node of EXPLAIN (FORMAT JSON).
type planNode struct {
	NodeType     string     `json:"Node Type"`
	RelationName string     `json:"Relation Name"`
	IndexName    string     `json:"Index Name"`
	Plans        []planNode `json:"Plans"`
}

// explain reads the custom and the generic plan of a history query: a Seq Scan of events
// reads the whole table; an index scan names its index.
func explain(ctx context.Context, store hub.Store, f hub.HistoryFilter) (storetest.Plan, error) {
	texts, err := postgres.HistoryPlans(ctx, store.(*postgres.Store), f)
	if err != nil {
		return storetest.Plan{}, err
	}
	p := storetest.Plan{Text: strings.Join(texts, "\n")}
	var walk func(n planNode)
	walk = func(n planNode) {
		if n.NodeType == "Seq Scan" && n.RelationName == "events" {
			p.FullScan = true
		}
		if strings.HasPrefix(n.IndexName, "events_") && !slices.Contains(p.Indexes, n.IndexName) {
			p.Indexes = append(p.Indexes, n.IndexName)
		}
		for _, c := range n.Plans {
			walk(c)
		}
	}
	for _, text := range texts {
		var doc []struct {
			Plan planNode `json:"Plan"`
		}
		if err := json.Unmarshal([]byte(text), &doc); err != nil {
			return p, err
		}
		for _, d := range doc {
			walk(d.Plan)
		}
	}
	return p, nil
}

// BenchmarkIngest: go test -run '^$' -bench Ingest -benchtime 20000x ./internal/hub/postgres
func BenchmarkIngest(b *testing.B) {
	storetest.BenchIngest(b, open(b, pgtest.NewDatabase(b)), hub.Options{Writers: 1}) // as hub serve runs it
}

// BenchmarkClusterHistory: go test -run '^$' -bench ClusterHistory ./internal/hub/postgres
func BenchmarkClusterHistory(b *testing.B) {
	storetest.BenchClusterHistory(b, open(b, pgtest.NewDatabase(b)))
}
