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

const appTeamPolicy = `
kind: AccessPolicy
metadata: {name: teams}
spec:
  roles:
    - name: payments
      subjects: [{token: payments-ci}]
      allow: [{action: promote, workspaces: [payments], environments: [dev, stage]}]
    - name: release
      subjects: [{token: release-bot}]
      allow: [{action: promote, environments: [prod]}, {action: override, environments: [prod]}]
`

// TestAppPromotionsByTheAccessPolicies: whoami answers who a token is and whether it may
// promote a workload (its workspace as the hub last read it); a team's CI records its own
// app promotions and versions, as itself, where its role allows, and nothing else.
func TestAppPromotionsByTheAccessPolicies(t *testing.T) {
	var ap v1alpha1.AccessPolicy
	if err := yaml.Unmarshal([]byte(appTeamPolicy), &ap); err != nil {
		t.Fatal(err)
	}
	policy := access.Compile([]*v1alpha1.AccessPolicy{&ap})
	rights := access.NewRights()
	rights.SetTip(policy)
	for _, env := range []string{"dev", "stage", "prod"} {
		rights.SetEnvironment(env, policy)
		rights.SetWorkspaces(env, map[string]string{"hello": "payments", "ledger": "billing", "hello-x": "billing"})
	}
	s := startServerWith(t, filepath.Join(t.TempDir(), "hub.db"), api.Options{Rights: rights})
	token := func(name string) string {
		_, secret, err := s.hub.CreateToken(t.Context(), hub.TokenRead, name, time.Time{})
		if err != nil {
			t.Fatal(err)
		}
		return secret
	}
	ci, bot := token("payments-ci"), token("release-bot")

	var me api.WhoAmI
	s.must(http.StatusOK, "GET", "/api/v1/whoami", ci, nil, &me)
	if me.Identity.Token != "payments-ci" || !slices.Equal(me.Roles, []string{"payments"}) || me.Decision != nil {
		t.Fatalf("whoami: %+v", me)
	}
	for q, want := range map[string]bool{
		"action=promote&environment=stage&workload=hello":  true,
		"action=promote&environment=prod&workload=hello":   false,
		"action=promote&environment=stage&workload=ledger": false,
		"action=promote&environment=stage&workload=nobody": false, // no workspace known: not the team's
		"action=author&platform=true":                      false,
	} {
		me = api.WhoAmI{}
		s.must(http.StatusOK, "GET", "/api/v1/whoami?"+q, ci, nil, &me)
		if me.Decision == nil || me.Decision.Allowed != want || me.Decision.Reason == "" {
			t.Errorf("%s: %+v, want allowed=%v", q, me.Decision, want)
		}
	}

	// The same values many times are asked about once; more values than the bound are refused.
	many := "action=promote" + strings.Repeat("&workload=hello", api.MaxWhoAmIValues) + strings.Repeat("&environment=stage", api.MaxWhoAmIValues)
	me = api.WhoAmI{}
	s.must(http.StatusOK, "GET", "/api/v1/whoami?"+many, ci, nil, &me)
	if me.Decision == nil || !me.Decision.Allowed {
		t.Errorf("repeated values: %+v, want allowed", me.Decision)
	}
	s.mustError(http.StatusBadRequest, "invalid", "GET", "/api/v1/whoami?action=promote"+strings.Repeat("&environment=stage", api.MaxWhoAmIValues+1), ci, nil)

	backdated := time.Now().Add(-24 * time.Hour)
	promotion := hub.Event{Kind: hub.EventPromotion, Environment: "stage", Workload: "hello", Revision: "abc", From: "dev", To: "stage", Message: "promoted",
		Time: backdated}
	var recorded hub.Event
	s.must(http.StatusCreated, "POST", "/api/v1/events", ci, promotion, &recorded)
	if recorded.Actor == nil || recorded.Actor.Token != "payments-ci" || !slices.Equal(recorded.Actor.Roles, []string{"payments"}) {
		t.Errorf("the app promotion is not recorded as the team's CI: %+v", recorded.Actor)
	}
	if !recorded.Time.After(backdated.Add(time.Hour)) {
		t.Errorf("the team's CI recorded its promotion at %s, the time it gave: want the hub's clock", recorded.Time)
	}
	forged := promotion
	forged.Actor = &hub.Actor{Email: "someone@contoso.com", Admin: true}
	s.must(http.StatusCreated, "POST", "/api/v1/events", ci, forged, &recorded)
	if recorded.Actor.Admin || recorded.Actor.Token != "payments-ci" {
		t.Errorf("a caller chose the actor recorded: %+v", recorded.Actor)
	}
	for name, e := range map[string]hub.Event{
		"prod":               {Kind: hub.EventPromotion, Environment: "prod", Workload: "hello"},
		"another workspace":  {Kind: hub.EventPromotion, Environment: "stage", Workload: "ledger"},
		"a platform promote": {Kind: hub.EventPromotion, Environment: "stage"},
		"another kind":       {Kind: hub.EventDesired, Environment: "stage"},
	} {
		if err := s.mustError(http.StatusForbidden, "forbidden", "POST", "/api/v1/events", ci, e); err.Error == "" {
			t.Errorf("%s: no reason", name)
		}
	}
	s.must(http.StatusCreated, "POST", "/api/v1/versions", ci, hub.WorkloadVersion{Environment: "stage", Workload: "hello", DeploymentTarget: "hello-stage", Version: "1.2.3"}, nil)
	s.mustError(http.StatusForbidden, "forbidden", "POST", "/api/v1/versions", ci, hub.WorkloadVersion{Environment: "prod", Workload: "hello", DeploymentTarget: "hello-prod", Version: "1.2.3"})
	// Nor a version of its workload for another team's target: ledger's, or hello-x's (the longest name owns it).
	for _, target := range []string{"ledger-stage", "hello-x-web"} {
		if e := s.mustError(http.StatusForbidden, "forbidden", "POST", "/api/v1/versions", ci,
			hub.WorkloadVersion{Environment: "stage", Workload: "hello", DeploymentTarget: target, Version: "6.6.6"}); !strings.Contains(e.Error, "is not one of workload hello's") {
			t.Errorf("a version for %s: %s", target, e.Error)
		}
	}

	// The release bot promotes and overrides the platform in prod, nowhere else.
	s.must(http.StatusCreated, "POST", "/api/v1/events", bot, hub.Event{Kind: hub.EventOverride, Environment: "prod", Message: "hotfix"}, nil)
	if e := s.mustError(http.StatusForbidden, "forbidden", "POST", "/api/v1/events", bot, hub.Event{Kind: hub.EventOverride, Environment: "stage"}); !strings.Contains(e.Error, "stage") {
		t.Errorf("override in stage: %s", e.Error)
	}
}
