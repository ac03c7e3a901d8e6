package hub

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"strings"
	"time"
	"unique"

	"github.com/fleetform/fleetform/internal/access"
)

// Principal is who a request comes from.
type Principal struct {
	Kind    string // admin, read, cluster, relay, or person (PrincipalPerson)
	Cluster string // for cluster tokens
	// Name is the token's label (admin and read tokens), or the person's name (Actor), for
	// the history's "by whom".
	Name string
	// Person is who a person principal is: someone signed in through the identity provider,
	// or a CI job with its own OIDC token.
	Person *access.Identity
}

// PrincipalPerson is the kind of a principal that is a person or a job known through an
// identity provider rather than a hub token.
const PrincipalPerson = "person"

// PeopleVerifier checks a bearer token (a JWT) from a trusted identity provider.
type PeopleVerifier interface {
	Verify(ctx context.Context, raw string) (access.Identity, error)
}

// MayRead reports whether p may read the hub's views and ask for writes the access policies
// decide: the admin token, a read-only token, or a person.
func (p Principal) MayRead() bool {
	return p.Kind == TokenAdmin || p.Kind == TokenRead || p.Kind == PrincipalPerson
}

// Identity is who the token speaks for, as the access policies judge it: an admin token may
// do everything; a read-only token may do what the policies grant its name; a cluster's or
// a relay's token is no one's.
func (p Principal) Identity() access.Identity {
	switch p.Kind {
	case TokenAdmin:
		name := p.Name
		if name == "" || name == SourceConfigured || name == SourceGenerated {
			name = "admin" // the admin token of the configuration, or the one generated at the start
		}
		return access.Identity{Token: name, Admin: true}
	case TokenRead:
		return access.Identity{Token: p.Name}
	case PrincipalPerson:
		if p.Person != nil {
			return *p.Person
		}
	}
	return access.Identity{}
}

// cachedPrincipal is a token lookup kept in memory until expires (Unix nanoseconds).
type cachedPrincipal struct {
	p       Principal
	expires int64
}

// DefaultTokenCacheTTL is the default of Options.TokenCacheTTL.
const DefaultTokenCacheTTL = 30 * time.Second

// tokenPrefix starts every token the hub makes.
const tokenPrefix = "ff_"

// NewToken returns a random token (256 bits, URL-safe base64).
func NewToken() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return tokenPrefix + base64.RawURLEncoding.EncodeToString(b), nil
}

// HashToken is how tokens are stored: SHA-256 (tokens are random, so a slow hash adds nothing).
func HashToken(token string) []byte {
	h := sha256.Sum256([]byte(token))
	return h[:]
}

// TokenID names a token by its hash without revealing it: the first 8 bytes, in hex.
func TokenID(hash []byte) string {
	return hex.EncodeToString(hash[:min(len(hash), 8)])
}

// MaxTokenName bounds the label of an admin or read token.
const MaxTokenName = 256

// bootstrapLock is the lock key that serialises changes of admin tokens across replicas (not
// an environment name: those cannot contain a space).
const bootstrapLock = "admin token"

// Bootstrap makes sure an admin token is active. With token set (FLEETFORM_HUB_ADMIN_TOKEN),
// it is stored (hashed) if it is not yet, and it replaces the admin token configured before
// and the generated one: they are revoked. A configured token that was revoked, expired, or
// is not an admin token is a conflict. With token empty, when no admin token is active, one
// is generated and returned, to be shown once.
func (h *Hub) Bootstrap(ctx context.Context, token string) (generated string, err error) {
	now := h.opts.Now()
	var revoked []Token
	err = h.store.Update(ctx, func(tx Tx) error {
		// Replicas starting together on one database: one at a time.
		if err := tx.LockEnvironment(ctx, bootstrapLock, true); err != nil {
			return err
		}
		if token != "" {
			var err error
			revoked, err = h.configureAdmin(ctx, tx, token, now)
			return err
		}
		has, err := tx.HasAdminToken(ctx, now)
		if err != nil || has {
			return err
		}
		if generated, err = NewToken(); err != nil {
			return err
		}
		return tx.PutTokens(ctx, Token{Hash: HashToken(generated), Kind: TokenAdmin, Name: SourceGenerated,
			Source: SourceGenerated, CreatedAt: now})
	})
	if err != nil {
		return "", err
	}
	h.forgetTokens(revoked)
	return generated, nil
}

// configureAdmin stores the configured admin token if it is new, and revokes the other
// configured and generated admin tokens; it returns those it revoked.
func (h *Hub) configureAdmin(ctx context.Context, tx Tx, token string, now time.Time) ([]Token, error) {
	hash := HashToken(token)
	t, err := tx.Token(ctx, hash)
	switch {
	case errors.Is(err, ErrNotFound):
		t = Token{Hash: hash, Kind: TokenAdmin, Name: SourceConfigured, Source: SourceConfigured, CreatedAt: now}
		if err := tx.PutTokens(ctx, t); err != nil {
			return nil, err
		}
	case err != nil:
		return nil, err
	case t.Kind != TokenAdmin:
		return nil, Errorf(CodeConflict, "the configured admin token is the hub's %s token %s: configure another one", t.Kind, TokenID(hash))
	case t.State(now) != TokenActive:
		return nil, Errorf(CodeConflict, "the configured admin token %s is %s: configure a new one", TokenID(hash), t.State(now))
	}
	admins, err := tx.Tokens(ctx, TokenFilter{Kind: TokenAdmin})
	if err != nil {
		return nil, err
	}
	var revoked []Token
	for _, a := range admins {
		if a.ID == TokenID(hash) || !a.RevokedAt.IsZero() || (a.Source != SourceConfigured && a.Source != SourceGenerated) {
			continue
		}
		a.RevokedAt = now
		if err := tx.PutTokens(ctx, a); err != nil {
			return nil, err
		}
		revoked = append(revoked, a)
	}
	return revoked, nil
}

// Authenticate returns the principal of a token: CodeUnauthorized when it is unknown,
// revoked or expired. A lookup is kept in memory for at most Options.TokenCacheTTL (and not
// past the token's expiry), so a token revoked on another replica works here at most that
// long; one revoked through this hub stops at once.
func (h *Hub) Authenticate(ctx context.Context, token string) (Principal, error) {
	if token == "" {
		return Principal{}, Errorf(CodeUnauthorized, "a bearer token is required")
	}
	if h.opts.People != nil && LooksLikeJWT(token) {
		return h.authenticatePerson(ctx, token)
	}
	hash := HashToken(token)
	key := tokenKey(hash)
	now := h.opts.Now()
	if c, ok := h.tokens.Load(key); ok && now.UnixNano() < c.expires {
		return c.p, nil
	}
	var t Token
	err := h.store.View(ctx, func(r Reader) error {
		var err error
		t, err = r.Token(ctx, hash)
		return err
	})
	if errors.Is(err, ErrNotFound) {
		return Principal{}, Errorf(CodeUnauthorized, "unknown token")
	}
	if err != nil {
		return Principal{}, err
	}
	if t.Kind == TokenSession {
		return Principal{}, Errorf(CodeUnauthorized, "a web UI session is not a bearer token")
	}
	switch t.State(now) {
	case TokenRevoked:
		return Principal{}, Errorf(CodeUnauthorized, "token %s was revoked", t.ID)
	case TokenExpired:
		return Principal{}, Errorf(CodeUnauthorized, "token %s expired at %s", t.ID, t.ExpiresAt.UTC().Format(time.RFC3339))
	}
	p := Principal{Kind: unique.Make(t.Kind).Value(), Cluster: t.Cluster, Name: t.Name}
	if h.opts.TokenCacheTTL > 0 {
		expires := now.Add(h.opts.TokenCacheTTL)
		if !t.ExpiresAt.IsZero() && t.ExpiresAt.Before(expires) {
			expires = t.ExpiresAt
		}
		h.tokens.Store(key, cachedPrincipal{p: p, expires: expires.UnixNano()})
	}
	return p, nil
}

// LooksLikeJWT tells a JWT (three base64url parts, a JSON header) from a hub token: the
// former goes to the People verifier.
func LooksLikeJWT(token string) bool {
	return strings.HasPrefix(token, "eyJ") && strings.Count(token, ".") == 2
}

// authenticatePerson checks a JWT from a trusted identity provider: CodeUnauthorized when
// it is not one, or fails a check.
func (h *Hub) authenticatePerson(ctx context.Context, token string) (Principal, error) {
	id, err := h.opts.People.Verify(ctx, token)
	if err != nil {
		return Principal{}, Errorf(CodeUnauthorized, "%s", err.Error())
	}
	return Principal{Kind: PrincipalPerson, Name: id.Actor(), Person: &id}, nil
}

// forgetTokens drops tokens from the lookup cache.
func (h *Hub) forgetTokens(ts []Token) {
	for _, t := range ts {
		if len(t.Hash) == len(tokenKey{}) {
			h.tokens.Delete(tokenKey(t.Hash))
		}
	}
}
