package identity_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/fleetform/fleetform/internal/identity"
)

// FuzzBearer: whatever a caller sends as the bearer, Verify refuses it without reaching a
// provider (none is trusted but an unreachable one) and without panicking.
func FuzzBearer(f *testing.F) {
	f.Add("eyJhbGciOiJSUzI1NiJ9.eyJpc3MiOiJodHRwczovL2V2aWwifQ.c2ln")
	f.Add("eyJhbGciOiJub25lIn0.e30.")
	f.Add("eyJ..")
	v := identity.NewVerifier(identity.Config{Trusted: []identity.Trust{{Issuer: "http://127.0.0.1:1", Audience: "a"}}})
	f.Fuzz(func(t *testing.T, raw string) {
		id, err := v.Verify(context.Background(), raw)
		if err == nil {
			t.Fatalf("%q verified as %+v", raw, id)
		}
	})
}

// FuzzSealer: a cookie a browser sends back opens only if this server sealed it.
func FuzzSealer(f *testing.F) {
	s := identity.NewSealer("k")
	now := time.Unix(1_800_000_000, 0)
	good, err := s.Seal("session", map[string]string{"a": "b"}, now.Add(time.Hour))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good)
	f.Add("e30.AAAA")
	f.Fuzz(func(t *testing.T, value string) {
		var v map[string]string
		err := s.Open("session", value, now, &v)
		if err == nil && value != good {
			t.Fatalf("%q opened", value)
		}
		if value == good && err != nil && !errors.Is(err, identity.ErrExpired) {
			t.Fatalf("the sealed value did not open: %v", err)
		}
	})
}
