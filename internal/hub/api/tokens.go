package api

import (
	"net/http"
	"time"

	"github.com/fleetform/fleetform/internal/hub"
)

// Tokens: issue, list, revoke and rotate (admin token).

func (a *Handler) createToken(w http.ResponseWriter, r *http.Request, _ hub.Principal) error {
	var req TokenRequest
	if err := a.decode(w, r, &req); err != nil {
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
	return WriteJSON(w, http.StatusCreated, issued(t.Name, secret, req.ExpiresAt))
}

func (a *Handler) listTokens(w http.ResponseWriter, r *http.Request, _ hub.Principal) error {
	q := r.URL.Query()
	ts, err := a.hub.Tokens(r.Context(), hub.TokenFilter{Kind: q.Get("kind"), Cluster: q.Get("cluster")})
	if err != nil {
		return err
	}
	return WriteJSON(w, http.StatusOK, TokenList{Tokens: ts})
}

func (a *Handler) revokeToken(w http.ResponseWriter, r *http.Request, _ hub.Principal) error {
	t, err := a.hub.RevokeToken(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	return WriteJSON(w, http.StatusOK, t)
}

func (a *Handler) rotateToken(w http.ResponseWriter, r *http.Request, _ hub.Principal) error {
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
