package serve

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/fleetform/fleetform/internal/access"
	"github.com/fleetform/fleetform/internal/fleet"
	"github.com/fleetform/fleetform/internal/hub"
	"github.com/fleetform/fleetform/internal/hub/api"
)

const retailPolicy = `apiVersion: fleetform.io/v1alpha1
kind: AccessPolicy
metadata: {name: teams}
spec:
  roles:
    - name: retail
      subjects: [{token: retail-ci}]
      allow: [{action: author, workspaces: [retail]}]
`

// TestChangesByTheAccessPolicies: with an AccessPolicy in the control plane, a read-only
// token its role names may change its workspace's objects through the authoring API and
// nothing else: a platform object, another team's workload, or a change that says it is
// the team's but takes another team's object, is 403 with the reason, and nothing is
// written.
func TestChangesByTheAccessPolicies(t *testing.T) {
	f := newFixture(t)
	f.files["access.yaml"] = retailPolicy
	f.files["billing.yaml"] = "apiVersion: scheduler.kalypso.io/v1alpha1\nkind: Workload\nmetadata: {name: ledger, labels: {workspace: billing}}\n" +
		"spec: {deploymentTargets: [{name: api, environment: dev, manifests: {repo: https://example.com/ledger, branch: main, path: .}}]}\n"
	f.cp.Commit(t, "main", f.files)
	rights := access.NewRights()
	cfg := f.svc.opts.Fleet.Config()
	cfg.Rights = rights
	f.svc = New(Options{Fleet: fleet.New(cfg), Interval: interval, Hub: f.hub, Now: f.clock.Now, Rights: rights})
	f.round()
	_, token, err := f.hub.CreateToken(t.Context(), hub.TokenRead, "retail-ci", time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	s := &changesServer{fixture: f, reader: token}
	s.changes = NewControlPlaneChanges(ChangesOptions{Fleet: f.svc.opts.Fleet, Hub: f.hub})
	srv := httptest.NewServer(Handler(api.New(f.hub, api.Options{}), f.hub, f.svc, NewWebhooks("", f.svc, nil), s.changes.Handler()))
	t.Cleanup(srv.Close)
	s.url = srv.URL

	workload := func(name, workspace string) string {
		return `{"operations":[{"op":"add","kind":"Workload","name":"` + name + `","labels":{"workspace":"` + workspace + `"},` +
			`"spec":{"deploymentTargets":[{"name":"web","environment":"dev","manifests":{"repo":"https://example.com/x","branch":"main","path":"."}}]}}]}`
	}
	code, body := s.post(token, "", workload("till", "retail"))
	if code != http.StatusOK || !s.result(body).Written {
		t.Fatalf("the team's own workload: %d %s", code, body)
	}
	if msg := commitMessage(t, f.cp, f.cp.Tip(t, "main").String()); !strings.Contains(msg, "Changed-By: retail-ci") {
		t.Errorf("commit message %q", msg)
	}
	before := s.repoBytes()
	for name, c := range map[string]struct{ body, reason string }{
		"a platform object": {addEdge, "token retail-ci may not author the platform's objects: no role allows it (token retail-ci holds retail)"},
		"another team's":    {workload("coins", "billing"), "may not author in workspace billing"},
		"claims retail, takes billing's": {`{"operations":[{"op":"set","kind":"Workload","name":"ledger","labels":{"workspace":"retail"}}]}`,
			"may not author in workspace billing"},
	} {
		code, body := s.post(token, "", c.body)
		if code != http.StatusForbidden || !strings.Contains(string(body), c.reason) {
			t.Errorf("%s: %d %s; want 403 saying %q", name, code, body, c.reason)
		}
	}
	if !equalBytes(before, s.repoBytes()) {
		t.Error("a refused change wrote into the repository")
	}
	events, err := f.hub.History(t.Context(), hub.HistoryFilter{Kind: hub.EventAuthoring})
	if err != nil {
		t.Fatal(err)
	}
	refused := 0
	for _, e := range events {
		if strings.HasPrefix(e.Message, "refused: ") && e.Actor != nil && e.Actor.Token == "retail-ci" && strings.Contains(e.Actor.Reason, "may not author") {
			refused++
		}
	}
	if refused != 3 {
		t.Errorf("%d refused attempts in the history, want 3: %+v", refused, events)
	}
}
