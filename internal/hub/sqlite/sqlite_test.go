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
