package identity_test

import (
	"context"
	"testing"
	"time"

	"github.com/fleetform/fleetform/internal/identity"
	"github.com/fleetform/fleetform/internal/testutil/oidctest"
)

// BenchmarkVerifyBearer is what a request with a CI job's OIDC token pays to be
// authenticated: the RS256 signature, issuer, audience and expiry (the provider's keys
// cached after the first request).
func BenchmarkVerifyBearer(b *testing.B) {
	p, err := oidctest.Start()
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = p.Close() })
	v := identity.NewVerifier(identity.Config{Trusted: []identity.Trust{{Issuer: p.Issuer(), Audience: "fleetform"}}})
	tok, err := p.Token("repo:contoso/payments:ref:refs/heads/main", "fleetform", time.Hour, map[string]any{"repository": "contoso/payments"})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	if _, err := v.Verify(ctx, tok); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := v.Verify(ctx, tok); err != nil {
			b.Fatal(err)
		}
	}
}
