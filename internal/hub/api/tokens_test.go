package api_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/fleetform/fleetform/internal/hub"
	"github.com/fleetform/fleetform/internal/hub/api"
)

// TestTokenEndpoints lists, revokes, rotates and expires tokens through the API: listings
// carry no secret, and only the admin token may manage tokens.
func TestTokenEndpoints(t *testing.T) {
	s := newServer(t)
	edge := s.register("edge-1", "dev", "edge")
	expires := time.Now().Add(time.Hour).UTC().Truncate(time.Second)
	var read api.IssuedToken
	s.must(http.StatusCreated, "POST", "/api/v1/tokens", adminToken,
		api.TokenRequest{Name: "grafana", ExpiresAt: &expires}, &read)
	if read.Name != "grafana" || len(read.ID) != 16 || read.ExpiresAt == nil || !read.ExpiresAt.Equal(expires) {
		t.Fatalf("created %+v", read)
	}
	var second api.IssuedToken
	s.must(http.StatusCreated, "POST", "/api/v1/tokens", adminToken, `{"name":"ops","kind":"admin"}`, &second)
	s.must(http.StatusOK, "GET", "/api/v1/tokens", second.Token, nil, nil) // an admin token
	s.mustError(http.StatusBadRequest, "invalid", "POST", "/api/v1/tokens", adminToken, `{"name":"x","kind":"cluster"}`)
	s.mustError(http.StatusBadRequest, "invalid", "POST", "/api/v1/tokens", adminToken, `{"name":"x","expiresAt":"2001-01-01T00:00:00Z"}`)

	status, body := s.call("GET", "/api/v1/tokens", adminToken, nil)
	if status != http.StatusOK {
		t.Fatalf("list: %d %s", status, body)
	}
	for _, secret := range []string{adminToken, edge, read.Token, second.Token} {
		if strings.Contains(string(body), secret) {
			t.Fatalf("the listing shows a secret: %s", body)
		}
	}
	var list api.TokenList
	if err := json.Unmarshal(body, &list); err != nil || len(list.Tokens) != 4 {
		t.Fatalf("list: %v %s", err, body)
	}
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(mustField(t, body, "tokens", 0), &keys); err != nil {
		t.Fatal(err)
	}
	assertKeys(t, keys, "id", "kind", "createdAt", "state")
	s.must(http.StatusOK, "GET", "/api/v1/tokens?kind=cluster&cluster=edge-1", adminToken, nil, &list)
	if len(list.Tokens) != 1 || list.Tokens[0].Cluster != "edge-1" {
		t.Fatalf("edge-1's tokens: %+v", list.Tokens)
	}
	s.mustError(http.StatusBadRequest, "invalid", "GET", "/api/v1/tokens?kind=root", adminToken, nil)

	// Revoke: 200 with the token, then 401 for it; unknown IDs are 404.
	var revoked hub.TokenInfo
	s.must(http.StatusOK, "DELETE", "/api/v1/tokens/"+read.ID, adminToken, nil, &revoked)
	if revoked.ID != read.ID || revoked.State != hub.TokenRevoked {
		t.Fatalf("revoked %+v", revoked)
	}
	if e := s.mustError(http.StatusUnauthorized, "unauthorized", "GET", "/api/v1/environments", read.Token, nil); !strings.Contains(e.Error, "revoked") {
		t.Fatalf("a revoked token: %q", e.Error)
	}
	s.mustError(http.StatusNotFound, "not_found", "DELETE", "/api/v1/tokens/0000000000000000", adminToken, nil)

	// Rotate: the cluster's new token reports, the old one is refused.
	var rotated api.IssuedToken
	s.must(http.StatusCreated, "POST", "/api/v1/tokens/"+tokenID(edge)+"/rotate", adminToken, nil, &rotated)
	if rotated.Name != "edge-1" || rotated.Token == edge {
		t.Fatalf("rotated %+v", rotated)
	}
	s.mustError(http.StatusUnauthorized, "unauthorized", "POST", "/api/v1/reports", edge, report("edge-1", "r1", hub.Compliant))
	s.must(http.StatusAccepted, "POST", "/api/v1/reports", rotated.Token, report("edge-1", "r1", hub.Compliant), nil)
	s.mustError(http.StatusConflict, "conflict", "POST", "/api/v1/tokens/"+read.ID+"/rotate", adminToken, `{}`)

	// Only the admin token manages tokens.
	s.mustError(http.StatusUnauthorized, "unauthorized", "GET", "/api/v1/tokens", "", nil)
	s.mustError(http.StatusForbidden, "forbidden", "GET", "/api/v1/tokens", rotated.Token, nil)
	s.mustError(http.StatusForbidden, "forbidden", "DELETE", "/api/v1/tokens/"+second.ID, rotated.Token, nil)
}

// TestRegisterWithExpiry: a cluster registered with expiresAt reports until then.
func TestRegisterWithExpiry(t *testing.T) {
	s := newServer(t)
	expires := time.Now().Add(time.Hour).UTC().Truncate(time.Second)
	var tok api.IssuedToken
	s.must(http.StatusCreated, "POST", "/api/v1/clusters", adminToken,
		api.ClusterRegistration{Name: "edge-1", Environment: "dev", ClusterType: "edge", ExpiresAt: &expires}, &tok)
	if tok.ExpiresAt == nil || tok.ID != tokenID(tok.Token) {
		t.Fatalf("registered %+v", tok)
	}
	var list api.TokenList
	s.must(http.StatusOK, "GET", "/api/v1/tokens?cluster=edge-1", adminToken, nil, &list)
	if len(list.Tokens) != 1 || list.Tokens[0].ExpiresAt == nil || !list.Tokens[0].ExpiresAt.Equal(expires) {
		t.Fatalf("edge-1's token: %+v", list.Tokens)
	}
	s.mustError(http.StatusBadRequest, "invalid", "POST", "/api/v1/clusters", adminToken,
		`{"name":"edge-2","environment":"dev","clusterType":"edge","expiresAt":"2001-01-01T00:00:00Z"}`)
}

func tokenID(secret string) string { return hub.TokenID(hub.HashToken(secret)) }

// mustField returns body.name[i] as raw JSON.
func mustField(t *testing.T, body []byte, name string, i int) json.RawMessage {
	t.Helper()
	var doc map[string][]json.RawMessage
	if err := json.Unmarshal(body, &doc); err != nil || len(doc[name]) <= i {
		t.Fatalf("%s[%d] of %s: %v", name, i, body, err)
	}
	return doc[name][i]
}
