// Package pgtest gives tests a fresh PostgreSQL database each, on the server at 127.0.0.1:5432
// (user postgres, trust authentication), or the one FLEETFORM_TEST_POSTGRES names.
//
// When the server cannot be reached, tests fail if FLEETFORM_REQUIRE_POSTGRES=1 (CI sets it)
// and are skipped with the reason otherwise.
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// DefaultAdminDSN is the maintenance database tests create their databases from.
const DefaultAdminDSN = "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"

// AdminDSN returns FLEETFORM_TEST_POSTGRES or DefaultAdminDSN.
func AdminDSN() string {
	if dsn := os.Getenv("FLEETFORM_TEST_POSTGRES"); dsn != "" {
		return dsn
	}
	return DefaultAdminDSN
}

// NewDatabase creates an empty database, dropped when the test ends, and returns its DSN.
func NewDatabase(tb testing.TB) string {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	admin := AdminDSN()
	conn, err := pgx.Connect(ctx, admin)
	if err != nil {
		unreachable(tb, admin, err)
	}
	defer func() { _ = conn.Close(ctx) }()
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	name := "fleetform_test_" + hex.EncodeToString(b)
	// CREATE DATABASE takes no parameters; the name is generated here.
	if _, err := conn.Exec(ctx, `CREATE DATABASE `+name); err != nil {
		tb.Fatalf("create database %s: %v", name, err)
	}
	tb.Cleanup(func() { dropDatabase(tb, admin, name) })
	u, err := url.Parse(admin)
	if err != nil {
		tb.Fatalf("FLEETFORM_TEST_POSTGRES: %v", err)
	}
	u.Path = "/" + name
	return u.String()
}

func unreachable(tb testing.TB, dsn string, err error) {
	tb.Helper()
	if os.Getenv("FLEETFORM_REQUIRE_POSTGRES") == "1" {
		tb.Fatalf("PostgreSQL at %s is required (FLEETFORM_REQUIRE_POSTGRES=1) but unreachable: %v", redact(dsn), err)
	}
	tb.Skipf("PostgreSQL at %s is unreachable (%v): skipping; set FLEETFORM_REQUIRE_POSTGRES=1 to make this a failure", redact(dsn), err)
}

func dropDatabase(tb testing.TB, admin, name string) {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, admin)
	if err != nil {
		tb.Errorf("drop database %s: %v", name, err)
		return
	}
	defer func() { _ = conn.Close(ctx) }()
	if _, err := conn.Exec(ctx, `DROP DATABASE IF EXISTS `+name+` WITH (FORCE)`); err != nil {
		tb.Errorf("drop database %s: %v", name, err)
	}
}

func redact(dsn string) string {
	u, err := url.Parse(dsn)
	if err != nil {
		return "(unparsable DSN)"
	}
	return u.Redacted()
}
