package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/fleetform/fleetform/internal/hub"
)

// LegacyToken is a tokens row as fleetform stored it before tokens could be listed, revoked
// or expire (columns hash, kind, cluster, name, created_at).
type LegacyToken struct {
	Secret, Kind, Name string
}

// LegacyTokens are the rows a store's upgrade test writes (hash = HashToken(Secret)) before
// the store migrates them, and CheckLegacyTokens checks after.
var LegacyTokens = []LegacyToken{
	{Secret: "old-configured", Kind: hub.TokenAdmin, Name: "env"},
	{Secret: "old-generated", Kind: hub.TokenAdmin, Name: "generated"},
	{Secret: "old-read", Kind: hub.TokenRead, Name: "grafana"},
}

// CheckLegacyTokens checks the LegacyTokens after the migration: they are listed with their
// IDs and still work, and a newly configured admin token replaces the configured and
// generated admin tokens stored before, not the read-only one.
func CheckLegacyTokens(t *testing.T, store hub.Store) {
	t.Helper()
	e := start(t, store, newClock())
	ctx := context.Background()
	want := map[string]string{"old-configured": "admin configured active", "old-generated": "admin generated active",
		"old-read": "read grafana active"}
	for _, ti := range e.tokens(hub.TokenFilter{}) {
		var secret string
		for s := range want {
			if hub.TokenID(hub.HashToken(s)) == ti.ID {
				secret = s
			}
		}
		if got := tokenLines([]hub.TokenInfo{ti})[0]; secret == "" || got != want[secret] {
			t.Errorf("listed %+v (%s), want one of %v", ti, got, want)
		}
		delete(want, secret)
	}
	if len(want) > 0 {
		t.Fatalf("not listed: %v", want)
	}
	for _, lt := range LegacyTokens {
		e.mustAuthenticate(lt.Secret, lt.Kind)
	}
	e.clock.Advance(time.Minute) // past the cache time of the lookups above
	if _, err := e.hub.Bootstrap(ctx, "new-configured"); err != nil {
		t.Fatal(err)
	}
	e.mustNotAuthenticate("old-configured", "revoked")
	e.mustNotAuthenticate("old-generated", "revoked")
	e.mustAuthenticate("old-read", hub.TokenRead)
	e.mustAuthenticate("new-configured", hub.TokenAdmin)
}
