package access_test

import (
	"fmt"
	"strings"
	"testing"

	yaml "go.yaml.in/yaml/v3"

	"github.com/fleetform/fleetform/api/v1alpha1"
	"github.com/fleetform/fleetform/internal/access"
)

// teams is the documented example: a platform team, two application teams, prod approvers
// and a CI job of the payments repository.
const teams = `
apiVersion: fleetform.io/v1alpha1
kind: AccessPolicy
metadata: {name: teams}
spec:
  roles:
    - name: payments
      subjects:
        - group: payments-devs
        - token: payments-ci
        - claim: {repository: contoso/payments}
      allow:
        - {action: author, workspaces: [payments]}
        - {action: promote, workspaces: [payments], environments: [dev, stage]}
        - {action: approve, environments: [dev]}
    - name: billing
      subjects: [{group: billing-devs}]
      allow:
        - {action: author, workspaces: [billing]}
        - {action: promote, workspaces: [billing], environments: [dev]}
    - name: platform
      subjects: [{group: platform-engineers}]
      allow: [{action: author, platform: true}, {action: promote, environments: ["*"]}, {action: approve, environments: ["*"]}, {action: override, environments: ["*"]}, {action: tokens}]
    - name: prod-approvers
      subjects: [{user: ada@contoso.com}]
      allow: [{action: approve, environments: [prod]}]
`

func policy(tb testing.TB, docs ...string) *access.Policy {
	tb.Helper()
	var aps []*v1alpha1.AccessPolicy
	for _, d := range docs {
		ap := &v1alpha1.AccessPolicy{}
		if err := yaml.Unmarshal([]byte(d), ap); err != nil {
			tb.Fatal(err)
		}
		if ps := access.Check(ap); len(ps) > 0 {
			tb.Fatalf("the policy has problems: %v", ps)
		}
		aps = append(aps, ap)
	}
	return access.Compile(aps)
}

var (
	platformEngineer = access.Identity{Issuer: "https://idp", Subject: "u1", Email: "pat@contoso.com", Groups: []string{"platform-engineers"}}
	paymentsDev      = access.Identity{Issuer: "https://idp", Subject: "u2", Email: "pay@contoso.com", Groups: []string{"payments-devs", "everyone"}}
	billingDev       = access.Identity{Issuer: "https://idp", Subject: "u3", Email: "bill@contoso.com", Groups: []string{"billing-devs"}}
	approver         = access.Identity{Issuer: "https://idp", Subject: "u4", Email: "ada@contoso.com"}
	reader           = access.Identity{Issuer: "https://idp", Subject: "u5", Email: "reader@contoso.com", Groups: []string{"everyone"}}
	paymentsCI       = access.Identity{Issuer: "https://token.actions.githubusercontent.com", Subject: "repo:contoso/payments:ref:refs/heads/main",
		Claims: map[string]string{"repository": "contoso/payments", "ref": "refs/heads/main"}}
	otherCI      = access.Identity{Issuer: "https://token.actions.githubusercontent.com", Subject: "repo:contoso/other", Claims: map[string]string{"repository": "contoso/other"}}
	jobNamedAda  = access.Identity{Issuer: "https://ci.example", Subject: "ada@contoso.com", Job: true}
	paymentsTok  = access.Identity{Token: "payments-ci"}
	readOnlyTok  = access.Identity{Token: "dashboard"}
	adminToken   = access.Identity{Token: "root", Admin: true}
	paymentsWork = []string{"payments"}
)

// TestDecisionTable is every action, for every role, in and out of its scope.
func TestDecisionTable(t *testing.T) {
	p := policy(t, teams)
	author := func(ws ...string) access.Request {
		return access.Request{Action: v1alpha1.ActionAuthor, Workspaces: ws}
	}
	authorPlatform := access.Request{Action: v1alpha1.ActionAuthor, Platform: true}
	appPromote := func(env string, ws ...string) access.Request {
		return access.Request{Action: v1alpha1.ActionPromote, Workspaces: ws, Environments: []string{env}}
	}
	envAction := func(action, env string) access.Request {
		return access.Request{Action: action, Environments: []string{env}}
	}
	tokens := access.Request{Action: v1alpha1.ActionTokens}
	cases := []struct {
		who  access.Identity
		req  access.Request
		want bool
	}{
		// payments: its workspace, its environments.
		{paymentsDev, author("payments"), true},
		{paymentsDev, author("billing"), false},
		{paymentsDev, author("payments", "billing"), false}, // one part out of scope refuses all
		{paymentsDev, authorPlatform, false},
		{paymentsDev, access.Request{Action: v1alpha1.ActionAuthor, Workspaces: paymentsWork, Platform: true}, false},
		{paymentsDev, appPromote("dev", "payments"), true},
		{paymentsDev, appPromote("stage", "payments"), true},
		{paymentsDev, appPromote("prod", "payments"), false},
		{paymentsDev, appPromote("dev", "billing"), false},
		{paymentsDev, envAction(v1alpha1.ActionPromote, "dev"), false}, // a whole environment is not the workspace's
		{paymentsDev, envAction(v1alpha1.ActionApprove, "dev"), true},
		{paymentsDev, envAction(v1alpha1.ActionApprove, "stage"), false},
		{paymentsDev, envAction(v1alpha1.ActionOverride, "dev"), false},
		{paymentsDev, tokens, false},
		// the same role through a hub token and a CI job's claims.
		{paymentsTok, appPromote("stage", "payments"), true},
		{paymentsCI, appPromote("stage", "payments"), true},
		{paymentsCI, appPromote("prod", "payments"), false},
		{otherCI, appPromote("dev", "payments"), false},
		// billing.
		{billingDev, author("billing"), true},
		{billingDev, author("payments"), false},
		{billingDev, appPromote("dev", "billing"), true},
		{billingDev, appPromote("stage", "billing"), false},
		{billingDev, envAction(v1alpha1.ActionApprove, "dev"), false},
		// platform: the platform's objects, every environment, not the teams' objects.
		{platformEngineer, authorPlatform, true},
		{platformEngineer, author("payments"), false},
		{platformEngineer, envAction(v1alpha1.ActionPromote, "prod"), true},
		{platformEngineer, appPromote("prod", "payments"), true},
		{platformEngineer, envAction(v1alpha1.ActionApprove, "prod"), true},
		{platformEngineer, envAction(v1alpha1.ActionOverride, "prod"), true},
		{platformEngineer, tokens, true},
		// prod approvers: approve prod, nothing else.
		{approver, envAction(v1alpha1.ActionApprove, "prod"), true},
		// a CI job whose subject (or email claim) reads like ada's is not ada.
		{jobNamedAda, envAction(v1alpha1.ActionApprove, "prod"), false},
		{approver, envAction(v1alpha1.ActionApprove, "dev"), false},
		{approver, envAction(v1alpha1.ActionPromote, "prod"), false},
		{approver, author("payments"), false},
		// read-only: signed in, no role; a token without a role.
		{reader, author("payments"), false},
		{reader, envAction(v1alpha1.ActionApprove, "dev"), false},
		{readOnlyTok, tokens, false},
		// an admin token: everything.
		{adminToken, authorPlatform, true},
		{adminToken, tokens, true},
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("%s/%s/%v/%v/%v", c.who, c.req.Action, c.req.Workspaces, c.req.Environments, c.req.Platform), func(t *testing.T) {
			d := p.Decide(c.who, c.req)
			if d.Allowed != c.want {
				t.Fatalf("allowed = %v, want %v (%s)", d.Allowed, c.want, d.Reason)
			}
			if d.Reason == "" || !strings.Contains(d.Reason, c.who.String()) {
				t.Errorf("the reason %q does not name %s", d.Reason, c.who)
			}
		})
	}
}

func TestDecisionReasons(t *testing.T) {
	p := policy(t, teams)
	d := p.Decide(paymentsDev, access.Request{Action: v1alpha1.ActionAuthor, Workspaces: []string{"payments", "billing"}})
	want := "pay@contoso.com may not author in workspace billing: no role allows it (pay@contoso.com holds payments)"
	if d.Reason != want {
		t.Errorf("reason %q, want %q", d.Reason, want)
	}
	d = p.Decide(paymentsDev, access.Request{Action: v1alpha1.ActionPromote, Workspaces: paymentsWork, Environments: []string{"dev"}})
	if want := "pay@contoso.com may promote: allowed by role payments"; d.Reason != want || len(d.Roles) != 1 {
		t.Errorf("reason %q roles %v, want %q", d.Reason, d.Roles, want)
	}
	d = p.Decide(reader, access.Request{Action: v1alpha1.ActionApprove, Environments: []string{"prod"}})
	if !strings.Contains(d.Reason, "holds no role") {
		t.Errorf("reason %q does not say the reader holds no role", d.Reason)
	}
	if got := p.Roles(paymentsCI); fmt.Sprint(got) != "[payments]" {
		t.Errorf("roles of the CI job %v, want [payments]", got)
	}
}

// TestNoPolicyLetsOnlyAdminsWrite keeps the behaviour of a control plane without any
// AccessPolicy.
func TestNoPolicyLetsOnlyAdminsWrite(t *testing.T) {
	p := access.Compile(nil)
	if d := p.Decide(platformEngineer, access.Request{Action: v1alpha1.ActionAuthor, Platform: true}); d.Allowed || !strings.Contains(d.Reason, "no AccessPolicy") {
		t.Errorf("without a policy a signed-in user was answered %+v", d)
	}
	if d := p.Decide(adminToken, access.Request{Action: v1alpha1.ActionTokens}); !d.Allowed {
		t.Errorf("without a policy an admin token was refused: %s", d.Reason)
	}
}

// TestClaimsNeedAnIssuer: a claim subject never matches an identity without an issuer (a
// hub token), nor one whose claims hold only some of the values.
func TestClaimsNeedAnIssuer(t *testing.T) {
	p := policy(t, `
kind: AccessPolicy
metadata: {name: ci}
spec:
  roles:
    - name: deployer
      subjects: [{claim: {iss: "https://token.actions.githubusercontent.com", repository: contoso/payments, ref: refs/heads/main}}]
      allow: [{action: promote, environments: [dev]}]
`)
	req := access.Request{Action: v1alpha1.ActionPromote, Environments: []string{"dev"}}
	if d := p.Decide(paymentsCI, req); !d.Allowed {
		t.Errorf("the CI job was refused: %s", d.Reason)
	}
	branch := paymentsCI
	branch.Claims = map[string]string{"repository": "contoso/payments", "ref": "refs/heads/feature"}
	otherIssuer := paymentsCI
	otherIssuer.Issuer = "https://gitlab.example.com"
	noIssuer := access.Identity{Claims: paymentsCI.Claims}
	for _, id := range []access.Identity{branch, otherIssuer, noIssuer} {
		if d := p.Decide(id, req); d.Allowed {
			t.Errorf("%+v was allowed: %s", id, d.Reason)
		}
	}
}

func TestCheck(t *testing.T) {
	cases := map[string]struct{ roles, want string }{
		"no name":           {`[{subjects: [{group: g}], allow: [{action: tokens}]}]`, "spec.roles[0].name: a role needs a name"},
		"duplicate":         {`[{name: a, subjects: [{group: g}], allow: [{action: tokens}]}, {name: a, subjects: [{group: g}], allow: [{action: tokens}]}]`, `spec.roles[1].name: role "a" is already defined at spec.roles[0]`},
		"no subject":        {`[{name: a, allow: [{action: tokens}]}]`, "spec.roles[0].subjects: a role needs at least one subject"},
		"two in a subject":  {`[{name: a, subjects: [{group: g, token: t}], allow: [{action: tokens}]}]`, "spec.roles[0].subjects[0]: a subject needs exactly one of group, user, token and claim"},
		"empty claim":       {`[{name: a, subjects: [{claim: {}}], allow: [{action: tokens}]}]`, "spec.roles[0].subjects[0].claim: a claim subject needs at least one claim"},
		"empty claim value": {`[{name: a, subjects: [{claim: {ref: ""}}], allow: [{action: tokens}]}]`, "spec.roles[0].subjects[0].claim.ref: a claim's value may not be empty"},
		"no rule":           {`[{name: a, subjects: [{group: g}]}]`, "spec.roles[0].allow: a role needs at least one rule"},
		"unknown action":    {`[{name: a, subjects: [{group: g}], allow: [{action: deploy}]}]`, `spec.roles[0].allow[0].action: unknown action "deploy"`},
		"author unscoped":   {`[{name: a, subjects: [{group: g}], allow: [{action: author}]}]`, "spec.roles[0].allow[0]: author needs workspaces or platform: true"},
		"author by env":     {`[{name: a, subjects: [{group: g}], allow: [{action: author, platform: true, environments: [dev]}]}]`, "spec.roles[0].allow[0].environments: author is not scoped by environment"},
		"promote no env":    {`[{name: a, subjects: [{group: g}], allow: [{action: promote, workspaces: [p]}]}]`, "spec.roles[0].allow[0].environments: promote needs environments"},
		"platform approve":  {`[{name: a, subjects: [{group: g}], allow: [{action: approve, platform: true, environments: [dev]}]}]`, "spec.roles[0].allow[0].platform: platform applies to author only"},
		"scoped tokens":     {`[{name: a, subjects: [{group: g}], allow: [{action: tokens, environments: [dev]}]}]`, "spec.roles[0].allow[0]: tokens is not scoped"},
		"empty workspace":   {`[{name: a, subjects: [{group: g}], allow: [{action: author, workspaces: [""]}]}]`, "spec.roles[0].allow[0].workspaces: an empty workspace name"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			ap := &v1alpha1.AccessPolicy{}
			if err := yaml.Unmarshal([]byte("spec: {roles: "+c.roles+"}"), ap); err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, p := range access.Check(ap) {
				got = append(got, p.Path+": "+p.Message)
			}
			if !strings.Contains(strings.Join(got, "\n"), c.want) {
				t.Errorf("problems %q, want one starting %q", got, c.want)
			}
		})
	}
	ap := &v1alpha1.AccessPolicy{}
	if err := yaml.Unmarshal([]byte(teams), ap); err != nil {
		t.Fatal(err)
	}
	if ps := access.Check(ap); len(ps) > 0 {
		t.Errorf("the documented example has problems: %v", ps)
	}
}

// BenchmarkDecide is one decision with 1,000 roles in the policy (bar: ≤ 1 ms).
func BenchmarkDecide(b *testing.B) {
	var sb strings.Builder
	sb.WriteString("kind: AccessPolicy\nmetadata: {name: many}\nspec:\n  roles:\n")
	for i := range 1000 {
		fmt.Fprintf(&sb, "    - name: team-%d\n      subjects: [{group: team-%d-devs}, {claim: {repository: contoso/team-%d}}]\n"+
			"      allow: [{action: author, workspaces: [team-%d]}, {action: promote, workspaces: [team-%d], environments: [dev, stage]}]\n", i, i, i, i, i)
	}
	p := policy(b, sb.String())
	id := access.Identity{Issuer: "https://idp", Subject: "u", Email: "dev@contoso.com", Groups: []string{"team-999-devs", "everyone", "team-500-devs"}}
	req := access.Request{Action: v1alpha1.ActionPromote, Workspaces: []string{"team-999", "team-500"}, Environments: []string{"dev", "stage"}}
	b.ReportAllocs()
	for b.Loop() {
		if d := p.Decide(id, req); !d.Allowed {
			b.Fatal(d.Reason)
		}
	}
}
