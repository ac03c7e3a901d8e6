package api_test

import (
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	yaml "go.yaml.in/yaml/v3"

	"github.com/fleetform/fleetform/api/v1alpha1"
	"github.com/fleetform/fleetform/internal/access"
	"github.com/fleetform/fleetform/internal/hub"
	"github.com/fleetform/fleetform/internal/hub/api"
)

const opsPolicy = `
kind: AccessPolicy
metadata: {name: ops}
spec:
  roles:
    - name: release
      subjects: [{token: release-bot}]
      allow: [{action: approve, environments: [dev]}, {action: tokens}]
`

// TestWritesByTheAccessPolicies: a read-only token may approve and administer tokens where
// its role allows, as itself, and never administer admin tokens; without a role it may not.
func TestWritesByTheAccessPolicies(t *testing.T) {
	var ap v1alpha1.AccessPolicy
	if err := yaml.Unmarshal([]byte(opsPolicy), &ap); err != nil {
		t.Fatal(err)
	}
	rights := access.NewRights()
	rights.SetTip(access.Compile([]*v1alpha1.AccessPolicy{&ap}))
	rights.SetEnvironment("dev", access.Compile([]*v1alpha1.AccessPolicy{&ap}))
	s := startServerWith(t, filepath.Join(t.TempDir(), "hub.db"), api.Options{Rights: rights})
	token := func(name, kind string) (string, string) {
		tok, secret, err := s.hub.CreateToken(t.Context(), kind, name, time.Time{})
		if err != nil {
			t.Fatal(err)
		}
		return tok.ID, secret
	}
	_, bot := token("release-bot", hub.TokenRead)
	_, viewer := token("viewer", hub.TokenRead)
	adminID, _ := token("second-admin", hub.TokenAdmin)
	readID, _ := token("dashboard", hub.TokenRead)

	s.must(http.StatusCreated, "POST", "/api/v1/approvals", bot, api.Approval{Environment: "dev", Commit: "c0ffee", By: "ada"}, nil)
	var approvals api.ApprovalList
	s.must(http.StatusOK, "GET", "/api/v1/approvals?environment=dev", bot, nil, &approvals)
	if len(approvals.Approvals) != 1 || !strings.Contains(approvals.Approvals[0].Message, "release-bot: ada") {
		t.Errorf("the approval is not recorded as the token's: %+v", approvals.Approvals)
	}
	if e := s.mustError(http.StatusForbidden, "forbidden", "POST", "/api/v1/approvals", bot, api.Approval{Environment: "prod", Commit: "c0ffee"}); !strings.Contains(e.Error, "may not approve in environment prod") {
		t.Errorf("approving prod: %s", e.Error)
	}
	s.mustError(http.StatusForbidden, "forbidden", "POST", "/api/v1/approvals", viewer, api.Approval{Environment: "dev", Commit: "c0ffee"})

	s.must(http.StatusCreated, "POST", "/api/v1/tokens", bot, api.TokenRequest{Name: "new-dashboard", Kind: hub.TokenRead}, nil)
	s.must(http.StatusOK, "GET", "/api/v1/tokens", bot, nil, nil)
	s.must(http.StatusOK, "DELETE", "/api/v1/tokens/"+readID, bot, nil, nil)
	for _, c := range []struct{ method, path string }{
		{"DELETE", "/api/v1/tokens/" + adminID},
		{"POST", "/api/v1/tokens/" + adminID + "/rotate"},
	} {
		if e := s.mustError(http.StatusForbidden, "forbidden", c.method, c.path, bot, nil); !strings.Contains(e.Error, "only the admin token") {
			t.Errorf("%s %s: %s", c.method, c.path, e.Error)
		}
	}
	s.mustError(http.StatusForbidden, "forbidden", "POST", "/api/v1/tokens", bot, api.TokenRequest{Name: "root", Kind: hub.TokenAdmin})
	// A cluster's token: revoked by the role, rotated (a secret to report as the cluster) by admins only.
	clusterToken := func(name string) string {
		secret, err := s.hub.RegisterCluster(t.Context(), hub.Cluster{Name: name, Environment: "dev", ClusterType: "x"}, false)
		if err != nil {
			t.Fatal(err)
		}
		return hub.TokenID(hub.HashToken(secret))
	}
	if e := s.mustError(http.StatusForbidden, "forbidden", "POST", "/api/v1/tokens/"+clusterToken("c1")+"/rotate", bot, nil); !strings.Contains(e.Error, "only the admin token rotates") {
		t.Errorf("rotating a cluster's token: %s", e.Error)
	}
	s.must(http.StatusOK, "DELETE", "/api/v1/tokens/"+clusterToken("c2"), bot, nil, nil)
	// A web session (here a person's) is ended by the admin token only.
	session, err := s.hub.CreateSession(t.Context(), hub.SessionOf{Person: &access.Identity{Issuer: "https://idp", Subject: "u1", Email: "ada@contoso.com"}}, "ada in a browser", time.Now().Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if e := s.mustError(http.StatusForbidden, "forbidden", "DELETE", "/api/v1/tokens/"+hub.TokenID(hub.HashToken(session)), bot, nil); !strings.Contains(e.Error, "web session") {
		t.Errorf("ending a web session: %s", e.Error)
	}
	s.mustError(http.StatusForbidden, "forbidden", "GET", "/api/v1/tokens", viewer, nil)
}
