package hub

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/fleetform/fleetform/internal/access"
)

// TokenSession is the kind of a web UI session: a random token the browser keeps in its
// session cookie, stored hashed like every token, so that a session can be listed (hub
// token list --kind session) and revoked (hub token revoke ID, or signing out), and ends
// when the hub token it signed in with is revoked.
const TokenSession = "session"

// SessionOf is what a session stands for: the hub token it signed in with (by ID, never
// the token), or the person the identity provider signed in.
type SessionOf struct {
	TokenID string           `json:"tokenID,omitempty"`
	Person  *access.Identity `json:"person,omitempty"`
}

// ErrSessionExpired is a session that ended at its expiry (not revoked): a person signed
// in through the identity provider is sent there again.
var ErrSessionExpired = errors.New("the session expired")

// sessionsKept is how long an ended session stays listed before it is deleted.
const sessionsKept = 7 * 24 * time.Hour

// CreateSession starts a web UI session for of, named name in listings, that ends at
// expires, and returns its secret (the cookie's value). Sessions that ended more than a week
// ago are deleted.
func (h *Hub) CreateSession(ctx context.Context, of SessionOf, name string, expires time.Time) (string, error) {
	now := h.opts.Now()
	if err := checkExpiry(expires, now); err != nil {
		return "", err
	}
	data, err := json.Marshal(of)
	if err != nil {
		return "", err
	}
	secret, err := NewToken()
	if err != nil {
		return "", err
	}
	t := Token{Hash: HashToken(secret), Kind: TokenSession, Name: clip(name, MaxTokenName), CreatedAt: now,
		ExpiresAt: expires, Session: string(data)}
	err = h.store.Update(ctx, func(tx Tx) error {
		if err := tx.DeleteEndedTokens(ctx, TokenSession, now.Add(-sessionsKept)); err != nil {
			return err
		}
		return tx.PutTokens(ctx, t)
	})
	return secret, err
}

// OpenSession returns the principal of a session's secret and when the session ends: the
// hub token's principal (as long as that token is active) or the person's. CodeUnauthorized
// when the session is unknown, revoked or expired (ErrSessionExpired then, with the
// principal's Kind alone), or its token no longer works.
func (h *Hub) OpenSession(ctx context.Context, secret string) (Principal, time.Time, error) {
	now := h.opts.Now()
	var s, signedWith Token
	var of SessionOf
	err := h.store.View(ctx, func(r Reader) error {
		var err error
		if s, err = r.Token(ctx, HashToken(secret)); err != nil {
			return err
		}
		if s.Kind != TokenSession {
			return ErrNotFound // a hub token is no session
		}
		if err := json.Unmarshal([]byte(s.Session), &of); err != nil {
			return fmt.Errorf("session %s: %w", s.ID, err)
		}
		if of.TokenID != "" {
			signedWith, err = r.TokenByID(ctx, of.TokenID)
		}
		return err
	})
	switch {
	case errors.Is(err, ErrNotFound):
		return Principal{}, time.Time{}, Errorf(CodeUnauthorized, "unknown session")
	case err != nil:
		return Principal{}, time.Time{}, err
	case s.State(now) == TokenExpired:
		var p Principal // says whose session expired: a person is sent to the identity provider again
		if of.Person != nil {
			p.Kind = PrincipalPerson
		}
		return p, time.Time{}, errors.Join(Errorf(CodeUnauthorized, "the session expired"), ErrSessionExpired)
	case s.State(now) == TokenRevoked:
		return Principal{}, time.Time{}, Errorf(CodeUnauthorized, "the session ended (signed out or revoked)")
	case of.Person != nil:
		return Principal{Kind: PrincipalPerson, Name: of.Person.Actor(), Person: of.Person}, s.ExpiresAt, nil
	case signedWith.State(now) != TokenActive || (signedWith.Kind != TokenAdmin && signedWith.Kind != TokenRead):
		return Principal{}, time.Time{}, Errorf(CodeUnauthorized, "the token this session signed in with is %s", signedWith.State(now))
	}
	return Principal{Kind: signedWith.Kind, Name: signedWith.Name}, s.ExpiresAt, nil
}

// EndSession revokes the session of secret (signing out); an unknown one is no error.
func (h *Hub) EndSession(ctx context.Context, secret string) error {
	now := h.opts.Now()
	return h.store.Update(ctx, func(tx Tx) error {
		s, err := tx.Token(ctx, HashToken(secret))
		if errors.Is(err, ErrNotFound) || (err == nil && (s.Kind != TokenSession || !s.RevokedAt.IsZero())) {
			return nil
		}
		if err != nil {
			return err
		}
		s.RevokedAt = now
		return tx.PutTokens(ctx, s)
	})
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n]
}
