package sqlite_test

import (
	"context"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/fleetform/fleetform/internal/hub"
	"github.com/fleetform/fleetform/internal/hub/sqlite"
	"github.com/fleetform/fleetform/internal/testutil/storetest"
)

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) (hub.Store, func() hub.Store) {
		t.Helper()
		path := filepath.Join(t.TempDir(), "hub.db")
		open := func() hub.Store {
			s, err := sqlite.Open(context.Background(), path)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = s.Close() })
			return s
		}
		return open(), open
	}, explain)
}

// TestLegacyTokens upgrades a database of schema version 3, with tokens stored before they
// could be revoked, to the current schema.
func TestLegacyTokens(t *testing.T) {
	path := filepath.Join(t.TempDir(), "hub.db")
	var rows []string
	for _, lt := range storetest.LegacyTokens {
		rows = append(rows, fmt.Sprintf(`INSERT INTO tokens (hash, kind, cluster, name, created_at) VALUES (X'%x', '%s', '', '%s', 1700000000000)`,
			hub.HashToken(lt.Secret), lt.Kind, lt.Name))
	}
	if err := sqlite.MigrateTo(context.Background(), path, 3, rows...); err != nil {
		t.Fatal(err)
	}
	s, err := sqlite.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	storetest.CheckLegacyTokens(t, s)
}

// TestTokenQueriesUseIndexes: each token lookup searches an index (with 100,000 cluster
// tokens, a scan costs milliseconds per call).
func TestTokenQueriesUseIndexes(t *testing.T) {
	s, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "hub.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	plans, err := sqlite.TokenPlans(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"hash": "sqlite_autoindex_tokens_1", "id": "tokens_id", "kind": "tokens_kind", "cluster": "tokens_cluster",
		"kind+cluster": "tokens_cluster", "delete": "tokens_cluster"}
	for name, index := range want {
		plan := strings.Join(plans[name], "\n")
		if !strings.Contains(plan, "SEARCH tokens USING INDEX "+index+" ") || strings.Contains(plan, "SCAN tokens") {
			t.Errorf("token lookup by %s:\n%s\nwant a search of %s", name, plan, index)
		}
	}
}

var usingIndex = regexp.MustCompile(`USING (?:COVERING )?INDEX (\S+)`)

// explain reads EXPLAIN QUERY PLAN: "SCAN events" reads the whole table or a whole index of
// it; "SEARCH events USING INDEX i (...)" reads a range of index i.
func explain(ctx context.Context, store hub.Store, f hub.HistoryFilter) (storetest.Plan, error) {
	rows, err := sqlite.HistoryPlan(ctx, store.(*sqlite.Store), f)
	if err != nil {
		return storetest.Plan{}, err
	}
	p := storetest.Plan{Text: strings.Join(rows, "\n")}
	for _, r := range rows {
		if !strings.HasPrefix(r, "SCAN events") && !strings.HasPrefix(r, "SEARCH events") {
			continue
		}
		p.FullScan = p.FullScan || strings.HasPrefix(r, "SCAN")
		if m := usingIndex.FindStringSubmatch(r); m != nil {
			p.Indexes = append(p.Indexes, m[1])
		}
	}
	return p, nil
}

// BenchmarkIngest: go test -run '^$' -bench Ingest -benchtime 20000x ./internal/hub/sqlite
func BenchmarkIngest(b *testing.B) {
	s, err := sqlite.Open(context.Background(), filepath.Join(b.TempDir(), "hub.db"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = s.Close() })
	storetest.BenchIngest(b, s, hub.Options{Writers: 1})
}

// BenchmarkClusterHistory: go test -run '^$' -bench ClusterHistory ./internal/hub/sqlite
func BenchmarkClusterHistory(b *testing.B) {
	s, err := sqlite.Open(context.Background(), filepath.Join(b.TempDir(), "hub.db"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = s.Close() })
	storetest.BenchClusterHistory(b, s)
}
