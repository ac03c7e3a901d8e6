package identity

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"

	"github.com/fleetform/fleetform/internal/access"
)

// Session bounds.
const (
	// MaxSession is the longest a session lasts, whatever the provider's token says.
	MaxSession = 12 * time.Hour
	// PendingLifetime is how long a started sign-in may take at the provider.
	PendingLifetime = 10 * time.Minute
)

// SignIn signs people in through the provider: the authorization code flow with PKCE and
// a nonce.
type SignIn struct {
	cfg Config
	mu  sync.Mutex
	// discovered once the provider was reached
	oauth    *oauth2.Config
	verifier *oidc.IDTokenVerifier
}

// NewSignIn returns the sign-in of cfg (its provider is read on first use).
func NewSignIn(cfg Config) *SignIn { return &SignIn{cfg: cfg} }

// DefaultExternalURL sets where browsers reach fleetform when the configuration does not
// say (the address it serves, on a laptop).
func (s *SignIn) DefaultExternalURL(u string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cfg.ExternalURL == "" {
		s.cfg.ExternalURL = u
		if s.oauth != nil {
			s.oauth.RedirectURL = s.cfg.RedirectURL()
		}
	}
}

// Pending is a sign-in started and not finished: kept in the browser (sealed) until the
// provider sends it back.
type Pending struct {
	State    string `json:"state"`
	Verifier string `json:"verifier"`
	Nonce    string `json:"nonce"`
	// Next is where the browser goes once signed in (a path on this server).
	Next string `json:"next"`
}

// Session is a signed-in person, until Expires.
type Session struct {
	Identity access.Identity `json:"identity"`
	Expires  time.Time       `json:"expires"`
}

// Begin starts a sign-in: the provider's authorization URL, and what the callback needs.
// loginHint, when set, tells the provider who signs in (OIDC's login_hint).
func (s *SignIn) Begin(ctx context.Context, next, loginHint string) (string, Pending, error) {
	oc, _, err := s.provider(ctx)
	if err != nil {
		return "", Pending{}, err
	}
	p := Pending{State: random(), Verifier: oauth2.GenerateVerifier(), Nonce: random(), Next: next}
	opts := []oauth2.AuthCodeOption{oauth2.S256ChallengeOption(p.Verifier), oidc.Nonce(p.Nonce)}
	if loginHint != "" {
		opts = append(opts, oauth2.SetAuthURLParam("login_hint", loginHint))
	}
	u := oc.AuthCodeURL(p.State, opts...)
	return u, p, nil
}

// Finish ends a sign-in the provider sent back with state and code: the code is exchanged
// (with the PKCE verifier) for an ID token, whose signature, issuer, audience, expiry and
// nonce are checked. The session lasts as long as the ID token, at most MaxSession.
func (s *SignIn) Finish(ctx context.Context, p Pending, state, code string, now time.Time) (Session, error) {
	if p.State == "" || subtle.ConstantTimeCompare([]byte(p.State), []byte(state)) != 1 {
		return Session{}, errors.New("the sign-in came back with another state: start it again")
	}
	oc, ver, err := s.provider(ctx)
	if err != nil {
		return Session{}, err
	}
	tok, err := oc.Exchange(oidc.ClientContext(ctx, s.cfg.httpClient()), code, oauth2.VerifierOption(p.Verifier))
	if err != nil {
		return Session{}, fmt.Errorf("the provider refused the sign-in's code: %w", err)
	}
	raw, ok := tok.Extra("id_token").(string)
	if !ok || raw == "" {
		return Session{}, errors.New("the provider sent no ID token: is the openid scope asked for?")
	}
	idt, err := ver.Verify(ctx, raw)
	if err != nil {
		return Session{}, fmt.Errorf("the provider's ID token: %w", err)
	}
	if subtle.ConstantTimeCompare([]byte(idt.Nonce), []byte(p.Nonce)) != 1 {
		return Session{}, errors.New("the provider's ID token carries another nonce: start the sign-in again")
	}
	id, err := fromToken(idt, s.cfg.groupsClaim())
	if err != nil {
		return Session{}, err
	}
	expires := idt.Expiry
	if limit := now.Add(MaxSession); expires.IsZero() || expires.After(limit) {
		expires = limit
	}
	return Session{Identity: id, Expires: expires}, nil
}

// provider discovers the provider once it can be reached.
func (s *SignIn) provider(ctx context.Context) (*oauth2.Config, *oidc.IDTokenVerifier, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.oauth != nil {
		return s.oauth, s.verifier, nil
	}
	p, err := discover(ctx, s.cfg, s.cfg.Issuer)
	if err != nil {
		return nil, nil, err
	}
	s.oauth = &oauth2.Config{ClientID: s.cfg.ClientID, ClientSecret: s.cfg.ClientSecret, Endpoint: p.Endpoint(),
		RedirectURL: s.cfg.RedirectURL(), Scopes: s.cfg.scopes()}
	s.verifier = p.VerifierContext(oidc.ClientContext(context.Background(), s.cfg.httpClient()), //nolint:contextcheck // the key set outlives this request
		&oidc.Config{ClientID: s.cfg.ClientID, SupportedSigningAlgs: algorithmNames()})
	return s.oauth, s.verifier, nil
}

func random() string {
	b := make([]byte, 24)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}
