package postgres_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/fleetform/fleetform/internal/hub/postgres"
	"github.com/fleetform/fleetform/internal/testutil/pgtest"
)

// TestWriteTransactionsRunWithoutParallelWorkersOrJIT: a write transaction turns both off
// for itself; a read keeps the server's settings.
func TestWriteTransactionsRunWithoutParallelWorkersOrJIT(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dsn := pgtest.NewDatabase(t)
	s := open(t, dsn)
	write, read, err := postgres.SettingsInUpdate(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	if write != "off 0" {
		t.Errorf("in a write transaction, jit and max_parallel_workers_per_gather are %q, want \"off 0\"", write)
	}
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = conn.Close(ctx) }()
	var server string
	if err := conn.QueryRow(ctx, postgres.SettingsQuery).Scan(&server); err != nil {
		t.Fatal(err)
	}
	if read != server {
		t.Errorf("a read runs with %q, want the server's %q", read, server)
	}
}
