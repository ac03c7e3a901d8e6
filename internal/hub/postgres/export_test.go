package postgres

import (
	"io/fs"
	"testing"
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
