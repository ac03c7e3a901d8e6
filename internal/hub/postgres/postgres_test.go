package postgres_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/fleetform/fleetform/internal/hub"
	"github.com/fleetform/fleetform/internal/hub/postgres"
	"github.com/fleetform/fleetform/internal/hub/postgres/pgtest"
	"github.com/fleetform/fleetform/internal/hub/storetest"
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
