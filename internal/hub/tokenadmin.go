package hub

import (
	"context"
	"errors"
	"time"
)

// CreateToken issues an admin, read-only or relay token labelled name that expires at expiresAt
// (zero: never), and returns it with its secret (shown once: only its hash is kept).
func (h *Hub) CreateToken(ctx context.Context, kind, name string, expiresAt time.Time) (Token, string, error) {
	now := h.opts.Now()
	switch {
	case kind != TokenAdmin && kind != TokenRead && kind != TokenRelay:
		return Token{}, "", Errorf(CodeInvalid, "kind %q: want read, admin or relay (cluster tokens come with their registration)", kind)
	case name == "" || len(name) > MaxTokenName:
		return Token{}, "", Errorf(CodeInvalid, "name is required, at most %d bytes: a label saying who the token is for", MaxTokenName)
	}
	if err := checkExpiry(expiresAt, now); err != nil {
		return Token{}, "", err
	}
	secret, err := NewToken()
	if err != nil {
		return Token{}, "", err
	}
	t := Token{ID: TokenID(HashToken(secret)), Hash: HashToken(secret), Kind: kind, Name: name, CreatedAt: now, ExpiresAt: expiresAt}
	err = h.store.Update(ctx, func(tx Tx) error { return tx.PutTokens(ctx, t) })
	return t, secret, err
}

// CreateReadToken issues a read-only token that does not expire.
func (h *Hub) CreateReadToken(ctx context.Context, name string) (string, error) {
	_, secret, err := h.CreateToken(ctx, TokenRead, name, time.Time{})
	return secret, err
}

// checkExpiry rejects an expiry time that is not in the future (zero is: never).
func checkExpiry(expiresAt, now time.Time) error {
	if !expiresAt.IsZero() && !expiresAt.After(now) {
		return Errorf(CodeInvalid, "expiresAt %s is not after the hub's time (%s)",
			expiresAt.UTC().Format(time.RFC3339Nano), now.UTC().Format(time.RFC3339Nano))
	}
	return nil
}

// Tokens lists tokens (never their secrets), by kind, then cluster, name and creation.
func (h *Hub) Tokens(ctx context.Context, f TokenFilter) ([]TokenInfo, error) {
	switch f.Kind {
	case "", TokenAdmin, TokenRead, TokenCluster, TokenRelay, TokenSession:
	default:
		return nil, Errorf(CodeInvalid, "kind %q: want admin, read, cluster, relay or session", f.Kind)
	}
	var ts []Token
	err := h.store.View(ctx, func(r Reader) error {
		var err error
		ts, err = r.Tokens(ctx, f)
		return err
	})
	now := h.opts.Now()
	out := make([]TokenInfo, 0, len(ts))
	for _, t := range ts {
		if t.Kind == TokenSession && f.Kind != TokenSession {
			continue // web UI sessions are listed when asked for
		}
		out = append(out, t.Info(now))
	}
	return out, err
}

// TokenByID returns the token with this ID (never its secret); CodeNotFound when none.
func (h *Hub) TokenByID(ctx context.Context, id string) (TokenInfo, error) {
	var t Token
	err := h.store.View(ctx, func(r Reader) error {
		var err error
		t, err = r.TokenByID(ctx, id)
		return err
	})
	if errors.Is(err, ErrNotFound) {
		return TokenInfo{}, Errorf(CodeNotFound, "no token with id %q (fleetform hub token list shows them)", id)
	}
	return t.Info(h.opts.Now()), err
}

// RevokeToken revokes the token with this ID: it stops working at once on this hub, and
// within Options.TokenCacheTTL on the others. Revoking a revoked token changes nothing. The
// last active admin token cannot be revoked (rotate it instead).
func (h *Hub) RevokeToken(ctx context.Context, id string) (TokenInfo, error) {
	now := h.opts.Now()
	var t Token
	err := h.store.Update(ctx, func(tx Tx) error {
		var err error
		if t, err = h.lockToken(ctx, tx, id); err != nil || !t.RevokedAt.IsZero() {
			return err
		}
		if t.Kind == TokenAdmin && t.State(now) == TokenActive {
			if err := h.keepAnAdmin(ctx, tx, t.ID, now); err != nil {
				return err
			}
		}
		t.RevokedAt = now
		return tx.PutTokens(ctx, t)
	})
	if err != nil {
		return TokenInfo{}, err
	}
	h.forgetTokens([]Token{t})
	return t.Info(now), nil
}

// lockToken takes the lock that serialises token changes across replicas and reads the
// token with this ID (CodeNotFound).
func (h *Hub) lockToken(ctx context.Context, tx Tx, id string) (Token, error) {
	if err := tx.LockEnvironment(ctx, bootstrapLock, true); err != nil {
		return Token{}, err
	}
	t, err := tx.TokenByID(ctx, id)
	if errors.Is(err, ErrNotFound) {
		return t, Errorf(CodeNotFound, "no token with id %q (fleetform hub token list shows them)", id)
	}
	return t, err
}

// keepAnAdmin fails when the admin token except is the only active one.
func (h *Hub) keepAnAdmin(ctx context.Context, tx Tx, except string, now time.Time) error {
	admins, err := tx.Tokens(ctx, TokenFilter{Kind: TokenAdmin})
	if err != nil {
		return err
	}
	for _, a := range admins {
		if a.ID != except && a.State(now) == TokenActive {
			return nil
		}
	}
	return Errorf(CodeConflict, "token %s is the last active admin token: rotate it, or create another admin token first", except)
}

// RotateToken replaces the token with this ID by a new one of the same kind, name and cluster
// that expires at expiresAt (zero: never), and returns the new one with its secret. The old
// one is revoked (a cluster's is deleted, as by register --rotate). A revoked token cannot
// be rotated.
func (h *Hub) RotateToken(ctx context.Context, id string, expiresAt time.Time) (Token, string, error) {
	now := h.opts.Now()
	if err := checkExpiry(expiresAt, now); err != nil {
		return Token{}, "", err
	}
	secret, err := NewToken()
	if err != nil {
		return Token{}, "", err
	}
	next := Token{ID: TokenID(HashToken(secret)), Hash: HashToken(secret), CreatedAt: now, ExpiresAt: expiresAt}
	var old Token
	var replaced []byte
	err = h.store.Update(ctx, func(tx Tx) error {
		var err error
		if old, err = h.lockToken(ctx, tx, id); err != nil {
			return err
		}
		if !old.RevokedAt.IsZero() {
			return Errorf(CodeConflict, "token %s was revoked: issue a new one (hub token create, or hub register --rotate for a cluster)", id)
		}
		if old.Kind == TokenSession {
			return Errorf(CodeConflict, "token %s is a web UI session: it cannot be rotated (revoke it; its person signs in again)", id)
		}
		next.Kind, next.Name, next.Cluster, next.Source = old.Kind, old.Name, old.Cluster, old.Source
		if old.Kind == TokenCluster {
			replaced, err = h.rotateClusterToken(ctx, tx, next)
			return err
		}
		old.RevokedAt = now
		if err := tx.PutTokens(ctx, old); err != nil {
			return err
		}
		return tx.PutTokens(ctx, next)
	})
	if err != nil {
		return Token{}, "", err
	}
	h.forgetTokens([]Token{old, {Hash: replaced}})
	return next, secret, nil
}

// rotateClusterToken gives a cluster a new token, as registering it again with rotate does,
// and returns the hash of the token replaced.
func (h *Hub) rotateClusterToken(ctx context.Context, tx Tx, next Token) ([]byte, error) {
	c, err := tx.LockCluster(ctx, next.Cluster)
	if errors.Is(err, ErrNotFound) {
		return nil, Errorf(CodeConflict, "cluster %q of the token is not registered", next.Cluster)
	}
	if err != nil {
		return nil, err
	}
	return h.register(ctx, tx, c.Cluster, next, true)
}
