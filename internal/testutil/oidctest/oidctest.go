// Package oidctest runs a real OpenID Connect provider (github.com/oauth2-proxy/mockoidc)
// on loopback for tests: the authorization code flow with PKCE, discovery, JWKS, ID tokens
// for queued people, tokens signed for CI jobs, and key rotation.
package oidctest

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"fmt"
	"maps"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/oauth2-proxy/mockoidc"
)

// Provider is a running provider.
type Provider struct {
	m *mockoidc.MockOIDC
	// mu orders the provider's settings (key, lifetime) with the requests it serves.
	mu     sync.RWMutex
	people []Person
}

// Person is who signs in next.
type Person struct {
	Subject string
	Email   string
	// Name is sent as preferred_username.
	Name   string
	Groups []string
}

// Options configure a provider started with StartWith.
type Options struct {
	// Addr is where it listens (default 127.0.0.1:0, any free port).
	Addr string
	// ClientID and ClientSecret are its one client (default: random).
	ClientID, ClientSecret string
	// People sign in by their email or subject as the authorization request's login_hint;
	// without a hint (or an unknown one), the first one does. Without people, those queued
	// with SignsIn do.
	People []Person
}

// Start runs a provider on 127.0.0.1 with a fresh key; Close stops it.
func Start() (*Provider, error) { return StartWith(context.Background(), Options{}) }

// StartWith runs a provider as o says.
func StartWith(ctx context.Context, o Options) (*Provider, error) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return nil, err
	}
	m, err := mockoidc.NewServer(key)
	if err != nil {
		return nil, err
	}
	if o.ClientID != "" {
		m.ClientID = o.ClientID
	}
	if o.ClientSecret != "" {
		m.ClientSecret = o.ClientSecret
	}
	p := &Provider{m: m, people: o.People}
	if err := m.AddMiddleware(p.ordered); err != nil {
		return nil, err
	}
	if o.Addr == "" {
		o.Addr = "127.0.0.1:0"
	}
	ln, err := (&net.ListenConfig{}).Listen(ctx, "tcp", o.Addr)
	if err != nil {
		return nil, err
	}
	if err := m.Start(ln, nil); err != nil {
		return nil, err
	}
	return p, nil
}

// ordered serves a request under the read lock of the provider's settings.
func (p *Provider) ordered(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.mu.RLock()
		defer p.mu.RUnlock()
		if len(p.people) > 0 && r.URL.Path == mockoidc.AuthorizationEndpoint {
			p.SignsIn(p.person(r.URL.Query().Get("login_hint")))
		}
		next.ServeHTTP(w, r)
	})
}

// person is who login_hint names, else the first person.
func (p *Provider) person(hint string) Person {
	for _, who := range p.people {
		if hint != "" && (hint == who.Email || hint == who.Subject) {
			return who
		}
	}
	return p.people[0]
}

// Close stops the provider.
func (p *Provider) Close() error { return p.m.Shutdown() }

// Issuer is the provider's issuer URL.
func (p *Provider) Issuer() string { return p.m.Issuer() }

// ClientID is the one client the provider knows.
func (p *Provider) ClientID() string { return p.m.ClientID }

// ClientSecret is that client's secret.
func (p *Provider) ClientSecret() string { return p.m.ClientSecret }

// SetLifetime sets how long the ID tokens issued from now on last.
func (p *Provider) SetLifetime(d time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.m.AccessTTL = d
}

// SignsIn queues who the next authorization request signs in (without any queued, the
// provider's default user).
func (p *Provider) SignsIn(who Person) {
	p.m.QueueUser(&mockoidc.MockUser{Subject: who.Subject, Email: who.Email, EmailVerified: true,
		PreferredUsername: who.Name, Groups: who.Groups})
}

// Token signs a token for audience with the provider's current key: the registered claims
// (issuer, subject, audience, issued now, expiring after lifetime; negative: already
// expired) and the extra ones (a CI job's repository, ref, environment).
func (p *Provider) Token(subject, audience string, lifetime time.Duration, extra map[string]any) (string, error) {
	now := time.Now()
	claims := jwt.MapClaims{"iss": p.Issuer(), "sub": subject, "aud": audience, "iat": now.Add(-time.Minute).Unix(),
		"nbf": now.Add(-time.Minute).Unix(), "exp": now.Add(lifetime).Unix()}
	maps.Copy(claims, extra)
	p.mu.RLock()
	defer p.mu.RUnlock()
	return p.m.Keypair.SignJWT(claims)
}

// Rotate replaces the provider's signing key: its JWKS then lists only the new one.
func (p *Provider) Rotate() error {
	kp, err := mockoidc.RandomKeypair(2048)
	if err != nil {
		return fmt.Errorf("a new key: %w", err)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.m.Keypair = kp
	return nil
}
