package client

import (
	"context"
	"net/http"
	"net/url"

	"github.com/fleetform/fleetform/internal/hub"
	"github.com/fleetform/fleetform/internal/hub/api"
)

// CreateToken issues an admin, read-only or relay token (r.Kind, read by default).
func (c *Client) CreateToken(ctx context.Context, r api.TokenRequest) (api.IssuedToken, error) {
	var out api.IssuedToken
	return out, c.do(ctx, http.MethodPost, "/api/v1/tokens", nil, r, &out, http.StatusCreated)
}

// Tokens lists the hub's tokens (never their secrets), of f.Kind and f.Cluster when set.
func (c *Client) Tokens(ctx context.Context, f hub.TokenFilter) ([]hub.TokenInfo, error) {
	q := url.Values{}
	if f.Kind != "" {
		q.Set("kind", f.Kind)
	}
	if f.Cluster != "" {
		q.Set("cluster", f.Cluster)
	}
	var out api.TokenList
	return out.Tokens, c.do(ctx, http.MethodGet, "/api/v1/tokens", q, nil, &out, http.StatusOK)
}

// RevokeToken revokes the token with this ID and returns it.
func (c *Client) RevokeToken(ctx context.Context, id string) (hub.TokenInfo, error) {
	var out hub.TokenInfo
	return out, c.do(ctx, http.MethodDelete, "/api/v1/tokens/"+url.PathEscape(id), nil, nil, &out, http.StatusOK)
}

// RotateToken replaces the token with this ID by a new one (r.ExpiresAt: when it expires)
// and returns the new one.
func (c *Client) RotateToken(ctx context.Context, id string, r api.RotateRequest) (api.IssuedToken, error) {
	var out api.IssuedToken
	return out, c.do(ctx, http.MethodPost, "/api/v1/tokens/"+url.PathEscape(id)+"/rotate", nil, r, &out, http.StatusCreated)
}
