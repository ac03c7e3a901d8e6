package identity_test

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fleetform/fleetform/internal/hub"
	"github.com/fleetform/fleetform/internal/identity"
	"github.com/fleetform/fleetform/internal/testutil/oidctest"
)

func startProvider(t *testing.T) *oidctest.Provider {
	t.Helper()
	p, err := oidctest.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	return p
}

func config(p *oidctest.Provider) identity.Config {
	return identity.Config{Issuer: p.Issuer(), ClientID: p.ClientID(), ClientSecret: p.ClientSecret(),
		ExternalURL: "https://fleetform.example.com"}
}

// authorize follows the provider's authorization URL as a browser would, up to the
// redirect back to fleetform, and returns that redirect's query.
func authorize(t *testing.T, authURL string) url.Values {
	t.Helper()
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	req, err := http.NewRequestWithContext(context.Background(), http.MethodGet, authURL, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	loc, err := url.Parse(resp.Header.Get("Location"))
	if err != nil || resp.StatusCode != http.StatusFound {
		t.Fatalf("authorize: %s, Location %q", resp.Status, resp.Header.Get("Location"))
	}
	if got := loc.Scheme + "://" + loc.Host + loc.Path; got != "https://fleetform.example.com/auth/callback" {
		t.Fatalf("redirected to %s, want the callback", got)
	}
	return loc.Query()
}

func TestSignInCodeFlow(t *testing.T) {
	p := startProvider(t)
	p.SignsIn(oidctest.Person{Subject: "u-42", Email: "pat@contoso.com", Name: "pat", Groups: []string{"payments-devs", "everyone"}})
	s := identity.NewSignIn(config(p))
	ctx := context.Background()
	authURL, pending, err := s.Begin(ctx, "/promotions", "")
	if err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse(authURL)
	q := u.Query()
	if q.Get("code_challenge_method") != "S256" || q.Get("code_challenge") == "" || q.Get("nonce") != pending.Nonce ||
		q.Get("redirect_uri") != "https://fleetform.example.com/auth/callback" || q.Get("scope") != "openid profile email groups" {
		t.Fatalf("authorization URL %s: want PKCE (S256), the nonce, the callback and the default scopes", authURL)
	}
	back := authorize(t, authURL)
	if _, err := s.Finish(ctx, pending, "another-state", back.Get("code"), time.Now()); err == nil {
		t.Fatal("a callback with another state was accepted")
	}
	sess, err := s.Finish(ctx, pending, back.Get("state"), back.Get("code"), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	id := sess.Identity
	if id.Issuer != p.Issuer() || id.Subject != "u-42" || id.Email != "pat@contoso.com" || id.Name != "pat" ||
		!slices.Equal(id.Groups, []string{"everyone", "payments-devs"}) {
		t.Fatalf("identity %+v", id)
	}
	if sess.Expires.Before(time.Now()) || sess.Expires.After(time.Now().Add(identity.MaxSession)) {
		t.Fatalf("session expires %s", sess.Expires)
	}
	if pending.Next != "/promotions" {
		t.Fatalf("next %q", pending.Next)
	}
}

func TestSignInRefusesAStolenCode(t *testing.T) {
	p := startProvider(t)
	s := identity.NewSignIn(config(p))
	ctx := context.Background()
	authURL, pending, err := s.Begin(ctx, "/", "")
	if err != nil {
		t.Fatal(err)
	}
	back := authorize(t, authURL)
	// Another browser's pending sign-in (its own PKCE verifier and nonce) with this code.
	_, other, err := s.Begin(ctx, "/", "")
	if err != nil {
		t.Fatal(err)
	}
	other.State = pending.State
	if _, err := s.Finish(ctx, other, back.Get("state"), back.Get("code"), time.Now()); err == nil {
		t.Fatal("a code was exchanged without its PKCE verifier")
	}
}

func TestSignInUnreachableProvider(t *testing.T) {
	s := identity.NewSignIn(identity.Config{Issuer: "http://127.0.0.1:1/realms/x", ClientID: "c", ExternalURL: "http://localhost"})
	if _, _, err := s.Begin(context.Background(), "/", ""); err == nil || !strings.Contains(err.Error(), "could not be read") {
		t.Fatalf("err = %v, want the provider could not be read", err)
	}
}

func TestBearerTokens(t *testing.T) {
	p := startProvider(t)
	ci := startProvider(t)
	other := startProvider(t)
	cfg := config(p)
	cfg.Trusted = []identity.Trust{{Issuer: ci.Issuer(), Audience: "fleetform"}}
	v := identity.NewVerifier(cfg)
	ctx := context.Background()
	sign := func(prov *oidctest.Provider, aud string, life time.Duration, extra map[string]any) string {
		t.Helper()
		tok, err := prov.Token("repo:contoso/payments:ref:refs/heads/main", aud, life, extra)
		if err != nil {
			t.Fatal(err)
		}
		return tok
	}
	job := sign(ci, "fleetform", time.Minute, map[string]any{"repository": "contoso/payments", "ref": "refs/heads/main", "environment": "stage", "run_attempt": 2,
		"groups": []string{"platform-engineers"}, "email": "ci@contoso.com"})
	if !hub.LooksLikeJWT(job) || hub.LooksLikeJWT("ff_abc") {
		t.Fatal("LooksLikeJWT does not tell a JWT from a hub token")
	}
	id, err := v.Verify(ctx, job)
	if err != nil {
		t.Fatal(err)
	}
	if id.Issuer != ci.Issuer() || id.Claims["repository"] != "contoso/payments" || id.Claims["environment"] != "stage" || id.Claims["run_attempt"] != "2" ||
		id.Groups != nil || id.Email != "" || id.Claims["email"] != "ci@contoso.com" || !id.Job {
		t.Fatalf("identity %+v", id)
	}
	person := sign(p, p.ClientID(), time.Minute, map[string]any{"groups": []string{"platform-engineers"}, "email": "ada@contoso.com"})
	if id, err := v.Verify(ctx, person); err != nil || id.Email != "ada@contoso.com" || !slices.Equal(id.Groups, []string{"platform-engineers"}) || id.Job {
		t.Fatalf("the sign-in provider's token: %+v, %v", id, err)
	}
	// An email the provider says it has not verified stays a claim: user subjects do not match it.
	unverified := sign(p, p.ClientID(), time.Minute, map[string]any{"email": "ada@contoso.com", "email_verified": false})
	if id, err := v.Verify(ctx, unverified); err != nil || id.Email != "" || id.Claims["email"] != "ada@contoso.com" {
		t.Fatalf("a token with an unverified email: %+v, %v", id, err)
	}
	refused := map[string]string{
		"another audience": sign(ci, "someone-else", time.Minute, nil),
		"expired":          sign(ci, "fleetform", -time.Minute, nil),
		"unknown issuer":   sign(other, "fleetform", time.Minute, nil),
		"not a JWT":        "eyJhbGciOiJub25lIn0.e30.",
		"tampered":         job[:len(job)-4] + "AAAA",
	}
	for name, tok := range refused {
		if _, err := v.Verify(ctx, tok); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if _, err := v.Verify(ctx, refused["unknown issuer"]); !errors.Is(err, identity.ErrUnknownIssuer) {
		t.Errorf("unknown issuer: %v, want ErrUnknownIssuer", err)
	}
}

func TestBearerKeyRotation(t *testing.T) {
	ci := startProvider(t)
	v := identity.NewVerifier(identity.Config{Trusted: []identity.Trust{{Issuer: ci.Issuer(), Audience: "fleetform"}}})
	ctx := context.Background()
	before, err := ci.Token("job", "fleetform", time.Minute, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := v.Verify(ctx, before); err != nil {
		t.Fatal(err)
	}
	if err := ci.Rotate(); err != nil {
		t.Fatal(err)
	}
	after, err := ci.Token("job", "fleetform", time.Minute, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := v.Verify(ctx, after); err != nil {
		t.Fatalf("a token signed with the rotated key: %v", err)
	}
	// A key the provider no longer publishes verifies nothing once the key set is read anew
	// (a verifier that read the set before the rotation may still hold the old key for a
	// moment after it fetched the new set: go-oidc replaces its cache asynchronously).
	fresh := identity.NewVerifier(identity.Config{Trusted: []identity.Trust{{Issuer: ci.Issuer(), Audience: "fleetform"}}})
	if _, err := fresh.Verify(ctx, before); err == nil {
		t.Fatal("a token signed with the retired key was accepted")
	}
}

func TestParseTrustAndCheck(t *testing.T) {
	if tr, err := identity.ParseTrust("https://token.actions.githubusercontent.com=fleetform"); err != nil || tr.Audience != "fleetform" {
		t.Fatalf("%+v %v", tr, err)
	}
	for _, bad := range []string{"https://x", "=aud", "ftp://x=aud", "https://u:p@x=aud"} {
		if _, err := identity.ParseTrust(bad); err == nil {
			t.Errorf("ParseTrust(%q) accepted", bad)
		}
	}
	for _, c := range []identity.Config{
		{Issuer: "https://idp"},
		{Issuer: "https://idp", ClientID: "c", ExternalURL: "fleetform.example.com"},
		{Issuer: "https://idp", ClientID: "c", ExternalURL: "https://ff.example.com/?x=1"},
		{ClientID: "c"},
	} {
		if err := c.Check(); err == nil {
			t.Errorf("%+v: accepted", c)
		}
	}
	if err := (identity.Config{Issuer: "https://idp", ClientID: "c", ExternalURL: "https://ff.example.com/"}).Check(); err != nil {
		t.Fatal(err)
	}
}

func TestSealer(t *testing.T) {
	a, b, c := identity.NewSealer("shared"), identity.NewSealer("shared"), identity.NewSealer("other")
	now := time.Now()
	sealed, err := a.Seal("session", identity.Session{Expires: now.Add(time.Hour)}, now.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	var s identity.Session
	if err := b.Open("session", sealed, now, &s); err != nil {
		t.Fatalf("a replica with the same secret: %v", err)
	}
	if err := c.Open("session", sealed, now, &s); err == nil {
		t.Fatal("another key opened it")
	}
	if err := a.Open("pending", sealed, now, &s); err == nil {
		t.Fatal("opened for another purpose")
	}
	if err := a.Open("session", sealed, now.Add(2*time.Hour), &s); !errors.Is(err, identity.ErrExpired) {
		t.Fatalf("after expiry: %v", err)
	}
	payload, mac, _ := strings.Cut(sealed, ".")
	if err := a.Open("session", payload+"x."+mac, now, &s); err == nil {
		t.Fatal("a tampered value opened")
	}
	if _, err := a.Seal("session", strings.Repeat("x", identity.MaxSealed), now); err == nil {
		t.Fatal("a value larger than a cookie was sealed")
	}
}

// TestLoginHintPicksThePerson: the demo provider signs in whom login_hint names, and its ID
// token (got without a browser, as a CI job gets one) verifies as that person.
func TestLoginHintPicksThePerson(t *testing.T) {
	p, err := oidctest.StartWith(context.Background(), oidctest.Options{ClientID: "fleetform", ClientSecret: "s3cret", People: []oidctest.Person{
		{Subject: "pat@contoso.com", Email: "pat@contoso.com", Name: "Pat", Groups: []string{"payments-devs"}},
		{Subject: "sam@contoso.com", Email: "sam@contoso.com", Name: "Sam", Groups: []string{"platform-engineers"}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	ctx := context.Background()
	v := identity.NewVerifier(identity.Config{Issuer: p.Issuer(), ClientID: "fleetform"})
	for login, group := range map[string]string{"sam@contoso.com": "platform-engineers", "pat@contoso.com": "payments-devs", "": "payments-devs"} {
		tok, err := oidctest.IDToken(ctx, p.Issuer(), "fleetform", "s3cret", login)
		if err != nil {
			t.Fatal(err)
		}
		id, err := v.Verify(ctx, tok)
		if err != nil || !slices.Equal(id.Groups, []string{group}) {
			t.Errorf("login %q: %+v, %v", login, id, err)
		}
	}
	if _, err := oidctest.IDToken(ctx, p.Issuer(), "fleetform", "wrong", "pat@contoso.com"); err == nil {
		t.Error("a wrong client secret got a token")
	}
}

// TestUnreachableIssuerIsNotAskedAtEveryRequest: after a trusted issuer's discovery failed,
// tokens naming it are refused at once for a while, without reaching for it again.
func TestUnreachableIssuerIsNotAskedAtEveryRequest(t *testing.T) {
	p := startProvider(t)
	tok, err := p.Token("job", "fleetform", time.Minute, nil)
	if err != nil {
		t.Fatal(err)
	}
	issuer := p.Issuer()
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	v := identity.NewVerifier(identity.Config{Trusted: []identity.Trust{{Issuer: issuer, Audience: "fleetform"}}})
	if _, err := v.Verify(context.Background(), tok); err == nil || !strings.Contains(err.Error(), "could not be read:") {
		t.Fatalf("first: %v", err)
	}
	if _, err := v.Verify(context.Background(), tok); err == nil || !strings.Contains(err.Error(), "a moment ago") {
		t.Fatalf("second: %v, want refused without asking again", err)
	}
}
