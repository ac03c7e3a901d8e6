package storetest

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fleetform/fleetform/internal/hub"
)

// testAdminTokenReplaced: a configured admin token replaces the one configured before and the
// one generated on the first start (a restart with a new FLEETFORM_HUB_ADMIN_TOKEN); the
// replaced ones stop working at once, and configuring one of them again is refused.
func (s suite) testAdminTokenReplaced(t *testing.T) {
	store, _ := s.open(t)
	e := start(t, store, newClock())
	ctx := context.Background()
	generated, err := e.hub.Bootstrap(ctx, "")
	if err != nil || generated == "" {
		t.Fatalf("bootstrap generated %q, %v", generated, err)
	}
	for _, configured := range []string{"first-configured", "second-configured"} {
		if again, err := e.hub.Bootstrap(ctx, configured); err != nil || again != "" {
			t.Fatalf("bootstrap with %s: %q, %v", configured, again, err)
		}
		if p, err := e.hub.Authenticate(ctx, configured); err != nil || p.Kind != hub.TokenAdmin {
			t.Fatalf("%s: %+v, %v", configured, p, err)
		}
	}
	for _, old := range []string{generated, "first-configured"} {
		if p, err := e.hub.Authenticate(ctx, old); code(err) != hub.CodeUnauthorized {
			t.Errorf("a replaced admin token authenticates as %+v (%v), want unauthorized", p, err)
		}
	}
	if _, err := e.hub.Bootstrap(ctx, "first-configured"); code(err) != hub.CodeConflict {
		t.Errorf("configuring a replaced admin token again: %v, want a conflict", err)
	}
	if _, err := e.hub.Bootstrap(ctx, "second-configured"); err != nil {
		t.Errorf("the same configured token again (a restart): %v", err)
	}
	if p, err := e.hub.Authenticate(ctx, "second-configured"); err != nil || p.Kind != hub.TokenAdmin {
		t.Errorf("the configured token after a restart: %+v, %v", p, err)
	}
}

// testTokenLifecycle: tokens of every kind are listed without secrets, revoked, rotated and
// expire; the last active admin token cannot be revoked.
func (s suite) testTokenLifecycle(t *testing.T) {
	store, _ := s.open(t)
	e := start(t, store, newClock())
	if _, err := e.hub.Bootstrap(context.Background(), "configured-admin"); err != nil {
		t.Fatal(err)
	}
	edge := e.register("edge-1", "dev", "edge")
	read, readSecret := e.createToken(hub.TokenRead, "grafana", time.Time{})
	e.createToken(hub.TokenAdmin, "ci", e.clock.Now().Add(time.Hour))
	checkTokenListing(t, e, edge)
	checkRevocation(t, e, read, readSecret)
	checkExpiry(t, e)
	checkRotation(t, e, edge)
}

// checkTokenListing checks the listing of testTokenLifecycle's tokens.
func checkTokenListing(t *testing.T, e *env, edge string) {
	t.Helper()
	list := e.tokens(hub.TokenFilter{})
	want := []string{"admin ci active", "admin configured active", "cluster edge-1 active", "read grafana active"}
	if got := tokenLines(list); !slices.Equal(got, want) {
		t.Fatalf("tokens %v, want %v", got, want)
	}
	for _, ti := range list {
		if len(ti.ID) != 16 || ti.CreatedAt.IsZero() {
			t.Errorf("listed %+v: want a 16-digit ID and a creation time", ti)
		}
	}
	if got := e.tokens(hub.TokenFilter{Kind: hub.TokenCluster, Cluster: "edge-1"}); len(got) != 1 || got[0].ID != hub.TokenID(hub.HashToken(edge)) {
		t.Fatalf("edge-1's token: %+v", got)
	}
	if _, err := e.hub.Tokens(context.Background(), hub.TokenFilter{Kind: "root"}); code(err) != hub.CodeInvalid {
		t.Fatalf("list tokens of kind root: %v", err)
	}
}

// checkRevocation: a revoked token is refused at once on this hub; revoking it again changes
// nothing, and it cannot be rotated.
func checkRevocation(t *testing.T, e *env, read hub.Token, secret string) {
	t.Helper()
	ctx := context.Background()
	e.mustAuthenticate(secret, hub.TokenRead)
	revoked, err := e.hub.RevokeToken(ctx, read.ID)
	if err != nil || revoked.State != hub.TokenRevoked || revoked.RevokedAt == nil {
		t.Fatalf("revoke: %+v, %v", revoked, err)
	}
	e.mustNotAuthenticate(secret, "revoked")
	if again, err := e.hub.RevokeToken(ctx, read.ID); err != nil || !again.RevokedAt.Equal(*revoked.RevokedAt) {
		t.Fatalf("revoke again: %+v, %v", again, err)
	}
	if _, err := e.hub.RevokeToken(ctx, "' OR 1=1 --"); code(err) != hub.CodeNotFound {
		t.Fatalf("revoke an unknown ID: %v", err)
	}
	if _, _, err := e.hub.RotateToken(ctx, read.ID, time.Time{}); code(err) != hub.CodeConflict {
		t.Fatalf("rotate a revoked token: %v, want a conflict", err)
	}
}

// checkExpiry: a token is refused once the clock reaches its expiry, even while its lookup
// is cached; a token cannot be created expired.
func checkExpiry(t *testing.T, e *env) {
	t.Helper()
	for _, lifetime := range []time.Duration{time.Hour, 10 * time.Second} { // longer, then shorter than the cache time
		tok, secret := e.createToken(hub.TokenRead, "short", e.clock.Now().Add(lifetime))
		e.mustAuthenticate(secret, hub.TokenRead)
		e.clock.Advance(lifetime)
		e.mustNotAuthenticate(secret, "expired")
		if got := e.tokenState(tok.ID); got != hub.TokenExpired {
			t.Fatalf("listed state of the expired token: %s", got)
		}
	}
	if _, _, err := e.hub.CreateToken(context.Background(), hub.TokenRead, "late", e.clock.Now().Add(-time.Second)); code(err) != hub.CodeInvalid {
		t.Fatalf("a token expiring in the past: %v, want invalid", err)
	}
}

// checkRotation: a rotated token is replaced by a new one of the same kind and name (a
// cluster's keeps its registration); the last active admin token is rotated, not revoked.
func checkRotation(t *testing.T, e *env, edge string) {
	t.Helper()
	ctx := context.Background()
	admin := e.tokenID("configured")
	if _, err := e.hub.RevokeToken(ctx, admin); code(err) != hub.CodeConflict {
		t.Fatalf("revoke the last active admin token: %v, want a conflict", err)
	}
	next, nextSecret, err := e.hub.RotateToken(ctx, admin, time.Time{})
	if err != nil || next.Kind != hub.TokenAdmin || next.Name != "configured" {
		t.Fatalf("rotate the admin token: %+v, %v", next, err)
	}
	e.mustNotAuthenticate("configured-admin", "revoked")
	e.mustAuthenticate(nextSecret, hub.TokenAdmin)
	clusterNext, clusterSecret, err := e.hub.RotateToken(ctx, hub.TokenID(hub.HashToken(edge)), e.clock.Now().Add(24*time.Hour))
	if err != nil || clusterNext.Cluster != "edge-1" {
		t.Fatalf("rotate edge-1's token: %+v, %v", clusterNext, err)
	}
	e.mustNotAuthenticate(edge, "unknown")
	e.mustAuthenticate(clusterSecret, hub.TokenCluster)
	if got := e.tokens(hub.TokenFilter{Cluster: "edge-1"}); len(got) != 1 || got[0].ExpiresAt == nil || got[0].ID != clusterNext.ID {
		t.Fatalf("edge-1's tokens after rotation: %+v", got)
	}
}

// testRevocationOnReplicas: two hubs on one database (replicas) cache token lookups; a token
// revoked through one stops working on the other once its cache time has passed.
func (s suite) testRevocationOnReplicas(t *testing.T) {
	store, reopen := s.open(t)
	c := newClock()
	opts := hub.Options{TokenCacheTTL: 30 * time.Second}
	a := startWith(t, store, c, opts)
	b := startWith(t, reopen(), c, opts)
	ctx := context.Background()
	read, secret, err := a.hub.CreateToken(ctx, hub.TokenRead, "grafana", time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	b.mustAuthenticate(secret, hub.TokenRead) // b caches the lookup
	if _, err := a.hub.RevokeToken(ctx, read.ID); err != nil {
		t.Fatal(err)
	}
	a.mustNotAuthenticate(secret, "revoked")
	c.Advance(29 * time.Second)
	b.mustAuthenticate(secret, hub.TokenRead) // within the cache time: still cached
	c.Advance(time.Second)
	b.mustNotAuthenticate(secret, "revoked")
}

func (e *env) createToken(kind, name string, expiresAt time.Time) (hub.Token, string) {
	e.t.Helper()
	tok, secret, err := e.hub.CreateToken(context.Background(), kind, name, expiresAt)
	if err != nil {
		e.t.Fatalf("create token %s: %v", name, err)
	}
	return tok, secret
}

func (e *env) tokens(f hub.TokenFilter) []hub.TokenInfo {
	e.t.Helper()
	ts, err := e.hub.Tokens(context.Background(), f)
	if err != nil {
		e.t.Fatalf("tokens: %v", err)
	}
	return ts
}

// tokenID is the ID of the (only) token named name.
func (e *env) tokenID(name string) string {
	e.t.Helper()
	for _, ti := range e.tokens(hub.TokenFilter{}) {
		if ti.Name == name {
			return ti.ID
		}
	}
	e.t.Fatalf("no token named %s", name)
	return ""
}

func (e *env) tokenState(id string) string {
	e.t.Helper()
	for _, ti := range e.tokens(hub.TokenFilter{}) {
		if ti.ID == id {
			return ti.State
		}
	}
	e.t.Fatalf("no token %s", id)
	return ""
}

func (e *env) mustAuthenticate(secret, kind string) {
	e.t.Helper()
	if p, err := e.hub.Authenticate(context.Background(), secret); err != nil || p.Kind != kind {
		e.t.Fatalf("authenticate: %+v, %v; want a %s token", p, err, kind)
	}
}

// mustNotAuthenticate checks that secret is refused (401) with a message saying why.
func (e *env) mustNotAuthenticate(secret, why string) {
	e.t.Helper()
	p, err := e.hub.Authenticate(context.Background(), secret)
	if code(err) != hub.CodeUnauthorized || !strings.Contains(err.Error(), why) {
		e.t.Fatalf("authenticate: %+v, %v; want unauthorized, %s", p, err, why)
	}
}

// tokenLines are "kind name-or-cluster state" of a listing.
func tokenLines(ts []hub.TokenInfo) []string {
	out := make([]string, len(ts))
	for i, ti := range ts {
		out[i] = ti.Kind + " " + ti.Name + ti.Cluster + " " + ti.State
	}
	return out
}
