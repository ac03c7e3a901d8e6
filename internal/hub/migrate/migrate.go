// Package migrate applies a store's embedded, numbered SQL migrations, forward only, each
// in its own transaction, recording them in schema_migrations.
package migrate

import (
	"context"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strconv"
	"strings"
)

// DB is what a store gives the runner.
type DB interface {
	// Applied returns the versions already applied (creating schema_migrations if needed).
	Applied(ctx context.Context) (map[int]bool, error)
	// Apply runs one migration's SQL and records its version, in one transaction.
	Apply(ctx context.Context, version int, name, sql string) error
}

// Run applies the migrations in dir of fsys (files NNNN_name.sql) that are not applied yet,
// in order, and returns the versions it applied.
func Run(ctx context.Context, db DB, fsys fs.FS, dir string) ([]int, error) {
	entries, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return nil, err
	}
	applied, err := db.Applied(ctx)
	if err != nil {
		return nil, fmt.Errorf("read schema_migrations: %w", err)
	}
	type migration struct {
		version int
		name    string
	}
	var todo []migration
	for _, e := range entries {
		num, _, ok := strings.Cut(e.Name(), "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil || path.Ext(e.Name()) != ".sql" {
			return nil, fmt.Errorf("migration %s: want NNNN_name.sql", e.Name())
		}
		if !applied[v] {
			todo = append(todo, migration{v, e.Name()})
		}
	}
	slices.SortFunc(todo, func(a, b migration) int { return a.version - b.version })
	var done []int
	for _, m := range todo {
		sql, err := fs.ReadFile(fsys, path.Join(dir, m.name))
		if err != nil {
			return done, err
		}
		if err := db.Apply(ctx, m.version, m.name, string(sql)); err != nil {
			return done, fmt.Errorf("migration %s: %w", m.name, err)
		}
		done = append(done, m.version)
	}
	return done, nil
}
