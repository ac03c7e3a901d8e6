package postgres_test

import (
	"context"
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
	})
}

// BenchmarkIngest: go test -run '^$' -bench Ingest -benchtime 20000x ./internal/hub/postgres
func BenchmarkIngest(b *testing.B) {
	storetest.BenchIngest(b, open(b, pgtest.NewDatabase(b)), hub.Options{Writers: 1}) // as hub serve runs it
}
