package hub

import (
	"context"
	"strings"
)

// maxAuditMessage bounds the message of a sign-in or token event.
const maxAuditMessage = 1024

// RecordSignInFailure appends a failed sign-in to the history: who tried (as far as known:
// the token's name, the identity provider's subject or email) and why it failed.
func (h *Hub) RecordSignInFailure(ctx context.Context, actor *Actor, reason string) error {
	if strings.TrimSpace(reason) == "" {
		return Errorf(CodeInvalid, "a failed sign-in needs the reason it failed")
	}
	if actor == nil {
		actor = &Actor{}
	}
	a := *actor
	a.Reason = cut(reason, maxAuditMessage)
	e := Event{Time: h.opts.Now(), Kind: EventSignIn, Message: "sign-in failed: " + a.Reason, Actor: &a}
	return h.store.Update(ctx, func(tx Tx) error { return tx.AddEvents(ctx, []Event{e}) })
}

// Token changes, as RecordTokenChange's what.
const (
	TokenChangeCreated = "created"
	TokenChangeRotated = "rotated"
	TokenChangeRevoked = "revoked"
)

// RecordTokenChange appends a token's creation, rotation or revocation to the history, by
// actor ("token created: read token dashboard (id ...)").
func (h *Hub) RecordTokenChange(ctx context.Context, actor *Actor, what string, t TokenInfo) error {
	switch what {
	case TokenChangeCreated, TokenChangeRotated, TokenChangeRevoked:
	default:
		return Errorf(CodeInvalid, "token change %q: want created, rotated or revoked", what)
	}
	name := t.Name
	if t.Kind == TokenCluster {
		name = "of cluster " + t.Cluster
	}
	msg := cut("token "+what+": "+t.Kind+" token "+name+" (id "+t.ID+")", maxAuditMessage)
	e := Event{Time: h.opts.Now(), Kind: EventToken, Message: msg, Actor: actor}
	return h.store.Update(ctx, func(tx Tx) error { return tx.AddEvents(ctx, []Event{e}) })
}

// cut bounds s to n bytes of valid UTF-8, marking the cut.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "") + "…"
}
