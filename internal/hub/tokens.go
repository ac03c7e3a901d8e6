package hub

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"time"
)

// Principal is who a request comes from.
type Principal struct {
	Kind    string // admin, read or cluster
	Cluster string // for cluster tokens
}

type cachedPrincipal struct {
	p       Principal
	expires time.Time
}

// tokenCacheTTL bounds how long a revoked token may still work on another replica.
const tokenCacheTTL = 30 * time.Second

// NewToken returns a random token (256 bits, URL-safe base64).
func NewToken() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return "ff_" + base64.RawURLEncoding.EncodeToString(b), nil
}

// HashToken is how tokens are stored: SHA-256 (tokens are random, so a slow hash adds nothing).
func HashToken(token string) []byte {
	h := sha256.Sum256([]byte(token))
	return h[:]
}

// bootstrapLock is the lock key that serialises admin-token generation (not an environment
// name: those cannot contain a space).
const bootstrapLock = "admin token"

// Bootstrap makes sure an admin token exists. With token set (FLEETFORM_HUB_ADMIN_TOKEN), it
// is stored (hashed) if it is not yet; otherwise, when no admin token exists, one is generated
// and returned, to be shown once.
func (h *Hub) Bootstrap(ctx context.Context, token string) (generated string, err error) {
	err = h.store.Update(ctx, func(tx Tx) error {
		if token != "" {
			if _, err := tx.Token(ctx, HashToken(token)); err == nil {
				return nil
			} else if !errors.Is(err, ErrNotFound) {
				return err
			}
			return tx.PutToken(ctx, Token{Hash: HashToken(token), Kind: TokenAdmin, Name: "env", CreatedAt: h.opts.Now()})
		}
		// Replicas starting together on one database: one generates, the others see it.
		if err := tx.LockEnvironment(ctx, bootstrapLock, true); err != nil {
			return err
		}
		has, err := tx.HasAdminToken(ctx)
		if err != nil || has {
			return err
		}
		if generated, err = NewToken(); err != nil {
			return err
		}
		return tx.PutToken(ctx, Token{Hash: HashToken(generated), Kind: TokenAdmin, Name: "generated", CreatedAt: h.opts.Now()})
	})
	return generated, err
}

// Authenticate returns the principal of a token (CodeUnauthorized when unknown).
func (h *Hub) Authenticate(ctx context.Context, token string) (Principal, error) {
	if token == "" {
		return Principal{}, Errorf(CodeUnauthorized, "a bearer token is required")
	}
	hash := HashToken(token)
	if c, ok := h.tokens.Load(string(hash)); ok && h.opts.Now().Before(c.(cachedPrincipal).expires) {
		return c.(cachedPrincipal).p, nil
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
	p := Principal{Kind: t.Kind, Cluster: t.Cluster}
	h.tokens.Store(string(hash), cachedPrincipal{p: p, expires: h.opts.Now().Add(tokenCacheTTL)})
	return p, nil
}

// CreateReadToken issues a read-only token.
func (h *Hub) CreateReadToken(ctx context.Context, name string) (string, error) {
	tok, err := NewToken()
	if err != nil {
		return "", err
	}
	return tok, h.store.Update(ctx, func(tx Tx) error {
		return tx.PutToken(ctx, Token{Hash: HashToken(tok), Kind: TokenRead, Name: name, CreatedAt: h.opts.Now()})
	})
}
