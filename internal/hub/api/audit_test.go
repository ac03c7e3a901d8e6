package api_test

import (
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	yaml "go.yaml.in/yaml/v3"

	"github.com/fleetform/fleetform/api/v1alpha1"
	"github.com/fleetform/fleetform/internal/access"
	"github.com/fleetform/fleetform/internal/hub"
	"github.com/fleetform/fleetform/internal/hub/api"
)

const approversPolicy = `
kind: AccessPolicy
metadata: {name: approvers}
spec:
  roles:
    - name: approvers
      subjects: [{token: ann-token}, {token: bob-token}, {token: cid-token}]
      allow: [{action: approve, environments: ["*"]}, {action: tokens}]
`

// fourEyes is prod's rule: two approvals, none by the author.
type fourEyes struct{}

func (fourEyes) ApprovalRule(env string) hub.ApprovalRule {
	if env == "prod" {
		return hub.ApprovalRule{Count: 2, DistinctFromAuthor: true}
	}
	return hub.ApprovalRule{}
}

// TestAuditAndFourEyes: approvals and token changes are in the history with who made them
// and the decision's reason, found by kinds, person and team; under four-eyes the author of
// a change may not approve its promotion (403 with the reason).
func TestAuditAndFourEyes(t *testing.T) {
	var ap v1alpha1.AccessPolicy
	if err := yaml.Unmarshal([]byte(approversPolicy), &ap); err != nil {
		t.Fatal(err)
	}
	rights := access.NewRights()
	policy := access.Compile([]*v1alpha1.AccessPolicy{&ap})
	rights.SetTip(policy)
	rights.SetEnvironment("prod", policy)
	rights.SetEnvironment("dev", policy)
	s := startServerWith(t, filepath.Join(t.TempDir(), "hub.db"), api.Options{Rights: rights, Approvals: fourEyes{}})
	secret := func(name string) string {
		_, secret, err := s.hub.CreateToken(t.Context(), hub.TokenRead, name, time.Time{})
		if err != nil {
			t.Fatal(err)
		}
		return secret
	}
	ann, bob, cid := secret("ann-token"), secret("bob-token"), secret("cid-token")
	if err := s.hub.RecordChange(t.Context(), hub.Change{Revision: "c0ffee", By: "ann-token", What: "set ConfigMap x",
		Actor: &hub.Actor{Token: "ann-token"}}); err != nil {
		t.Fatal(err)
	}
	e := s.mustError(http.StatusForbidden, "forbidden", "POST", "/api/v1/approvals", ann, api.Approval{Environment: "prod", Commit: "c0ffee"})
	if !strings.Contains(e.Error, "made the change of commit c0ffee and may not approve") {
		t.Errorf("the author approving: %s", e.Error)
	}
	s.must(http.StatusCreated, "POST", "/api/v1/approvals", ann, api.Approval{Environment: "dev", Commit: "c0ffee"}, nil)
	s.must(http.StatusCreated, "POST", "/api/v1/approvals", bob, api.Approval{Environment: "prod", Commit: "c0ffee"}, nil)
	s.must(http.StatusCreated, "POST", "/api/v1/approvals", cid, api.Approval{Environment: "prod", Commit: "c0ffee"}, nil)
	if got, err := s.hub.Approvers(t.Context(), "prod", "c0ffee", true); err != nil || !slices.Equal(got, []string{"bob-token", "cid-token"}) {
		t.Errorf("prod's approvers: %v, %v", got, err)
	}
	s.must(http.StatusCreated, "POST", "/api/v1/tokens", bob, api.TokenRequest{Name: "dashboard", Kind: hub.TokenRead}, nil)

	var list api.HistoryList
	s.must(http.StatusOK, "GET", "/api/v1/history?kind=approval,token&actor=bob-token", bob, nil, &list)
	if len(list.Events) != 2 || list.Events[0].Kind != hub.EventToken || list.Events[1].Kind != hub.EventApproval {
		t.Fatalf("bob's approvals and token changes: %+v", list.Events)
	}
	for _, ev := range list.Events {
		if a := ev.Actor; a == nil || a.Token != "bob-token" || !slices.Equal(a.Roles, []string{"approvers"}) ||
			!strings.Contains(a.Reason, "allowed by role approvers") {
			t.Errorf("%s event's actor: %+v", ev.Kind, a)
		}
	}
	s.must(http.StatusOK, "GET", "/api/v1/history?group=approvers&environment=prod", bob, nil, &list)
	if len(list.Events) != 2 {
		t.Errorf("the approvers' events in prod: %+v", list.Events)
	}
}
