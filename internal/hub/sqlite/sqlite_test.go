package sqlite_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/fleetform/fleetform/internal/hub"
	"github.com/fleetform/fleetform/internal/hub/sqlite"
	"github.com/fleetform/fleetform/internal/hub/storetest"
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
	})
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
