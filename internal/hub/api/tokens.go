package api

import (
	"context"
	"net/http"
	"time"

	"github.com/fleetform/fleetform/api/v1alpha1"
	"github.com/fleetform/fleetform/internal/access"
	"github.com/fleetform/fleetform/internal/hub"
)

// Tokens: issue, list, revoke and rotate (the admin token, or a read-only token the access
// policies allow to administer tokens; only the admin token administers admin tokens).

func (a *Handler) createToken(w http.ResponseWriter, r *http.Request, p hub.Principal) error {
	actor, err := a.decide(p, access.Request{Action: v1alpha1.ActionTokens})
	if err != nil {
		return err
	}
	var req TokenRequest
	if err := a.decode(w, r, &req); err != nil {
		return err
	}
	if err := onlyAdminsOfAdmins(p, req.Kind); err != nil {
		return err
	}
	if req.Name == "" {
		return hub.Errorf(hub.CodeInvalid, "name is required: a label saying who the token is for")
	}
	kind := req.Kind
	if kind == "" {
		kind = hub.TokenRead
	}
	t, secret, err := a.hub.CreateToken(r.Context(), kind, req.Name, timeOrZero(req.ExpiresAt))
	if err != nil {
		return err
	}
	a.recordToken(r, actor, hub.TokenChangeCreated, t.Info(t.CreatedAt))
	return WriteJSON(w, http.StatusCreated, issued(t.Name, secret, req.ExpiresAt))
}

func (a *Handler) listTokens(w http.ResponseWriter, r *http.Request, p hub.Principal) error {
	if err := a.permit(p, access.Request{Action: v1alpha1.ActionTokens}); err != nil {
		return err
	}
	q := r.URL.Query()
	ts, err := a.hub.Tokens(r.Context(), hub.TokenFilter{Kind: q.Get("kind"), Cluster: q.Get("cluster")})
	if err != nil {
		return err
	}
	return WriteJSON(w, http.StatusOK, TokenList{Tokens: ts})
}

func (a *Handler) revokeToken(w http.ResponseWriter, r *http.Request, p hub.Principal) error {
	actor, err := a.permitOn(r, p, r.PathValue("id"), false)
	if err != nil {
		return err
	}
	t, err := a.hub.RevokeToken(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	a.recordToken(r, actor, hub.TokenChangeRevoked, t)
	return WriteJSON(w, http.StatusOK, t)
}

func (a *Handler) rotateToken(w http.ResponseWriter, r *http.Request, p hub.Principal) error {
	actor, err := a.permitOn(r, p, r.PathValue("id"), true)
	if err != nil {
		return err
	}
	var req RotateRequest
	if r.ContentLength != 0 { // the body is optional
		if err := a.decode(w, r, &req); err != nil {
			return err
		}
	}
	t, secret, err := a.hub.RotateToken(r.Context(), r.PathValue("id"), timeOrZero(req.ExpiresAt))
	if err != nil {
		return err
	}
	a.recordToken(r, actor, hub.TokenChangeRotated, t.Info(t.CreatedAt))
	name := t.Name
	if t.Kind == hub.TokenCluster {
		name = t.Cluster
	}
	return WriteJSON(w, http.StatusCreated, issued(name, secret, req.ExpiresAt))
}

// issued is the answer that hands out a token.
func issued(name, secret string, expiresAt *time.Time) IssuedToken {
	return IssuedToken{Name: name, Token: secret, ID: hub.TokenID(hub.HashToken(secret)), ExpiresAt: expiresAt}
}

func timeOrZero(t *time.Time) time.Time {
	if t == nil {
		return time.Time{}
	}
	return *t
}

// permitOn decides token administration on the token with this ID: the access policies
// must allow it, only the admin token administers admin tokens and web sessions, and only
// the admin token rotates a cluster's token, as only it registers clusters (the new secret would let its
// holder report as the cluster); revoking one is allowed. A token's kind never changes, so
// it is read once, before the change. It returns the actor to record.
func (a *Handler) permitOn(r *http.Request, p hub.Principal, id string, rotate bool) (*hub.Actor, error) {
	actor, err := a.decide(p, access.Request{Action: v1alpha1.ActionTokens})
	if err != nil || p.Kind == hub.TokenAdmin {
		return actor, err
	}
	t, err := a.hub.TokenByID(r.Context(), id)
	if err != nil {
		return nil, err
	}
	if t.Kind == hub.TokenSession {
		return nil, hub.Errorf(hub.CodeForbidden, "only the admin token ends a web session (sign out ends one's own)")
	}
	if rotate && t.Kind == hub.TokenCluster {
		return nil, hub.Errorf(hub.CodeForbidden, "only the admin token rotates a cluster's token (as only it registers clusters); "+
			"revoke the token, and have an admin rotate it or register the cluster again")
	}
	return actor, onlyAdminsOfAdmins(p, t.Kind)
}

// recordToken records a token change in the history; the change is made, so a failure to
// record it is logged, not answered.
func (a *Handler) recordToken(r *http.Request, actor *hub.Actor, what string, t hub.TokenInfo) {
	if err := a.hub.RecordTokenChange(context.WithoutCancel(r.Context()), actor, what, t); err != nil {
		a.opts.Logger.ErrorContext(r.Context(), "recording a token change in the history", "error", err.Error())
	}
}

// onlyAdminsOfAdmins refuses a token that is not admin the administration of admin tokens:
// a role that may administer tokens cannot make itself admin.
func onlyAdminsOfAdmins(p hub.Principal, kind string) error {
	if kind == hub.TokenAdmin && p.Kind != hub.TokenAdmin {
		return hub.Errorf(hub.CodeForbidden, "only the admin token creates, rotates or revokes admin tokens")
	}
	return nil
}
