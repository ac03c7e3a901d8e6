package ui_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/fleetform/fleetform/internal/hub"
)

// TestAuditPage: an approval made on the promotions page and a failed sign-in are on the
// audit page with who made them and the decision's reason, filtered by person, team and
// environment; the page is linked from the navigation.
func TestAuditPage(t *testing.T) {
	f := newFleet(t)
	c := client(t)
	f.signIn(t, c, adminToken)
	_, body, _ := f.get(t, c, "/promotions", "")
	if !strings.Contains(body, `href="/audit"`) {
		t.Fatal("the navigation does not link the audit page")
	}
	approval := url.Values{"csrf": {csrfOf(t, body)}, "environment": {"stage"}, "commit": {"c0ffee1111111111111111111111111111111111"}}
	if status, _, _ := f.post(t, c, "/promotions/approve", approval); status != http.StatusSeeOther {
		t.Fatalf("approval: %d", status)
	}
	if err := f.hub.RecordSignInFailure(context.Background(), &hub.Actor{Email: "mallory@example.com", Groups: []string{"interns"}}, "not in any allowed group"); err != nil {
		t.Fatal(err)
	}
	page := func(query string) string {
		t.Helper()
		status, body, _ := f.get(t, c, "/audit?"+query, "")
		if status != http.StatusOK {
			t.Fatalf("GET /audit?%s: %d\n%s", query, status, body)
		}
		return body
	}
	body = page("")
	for _, want := range []string{`data-kind="approval"`, "is an admin token", "c0ffee1", `data-kind="signin"`,
		"mallory@example.com", "not in any allowed group", `aria-current="page">Audit`} {
		if !strings.Contains(body, want) {
			t.Errorf("the audit page lacks %q", want)
		}
	}
	if body = page("environment=stage"); !strings.Contains(body, `data-kind="approval"`) || strings.Contains(body, `data-kind="signin"`) {
		t.Error("filtered by environment stage: want the approval only")
	}
	if body = page("actor=MALLORY@example.com"); strings.Contains(body, `data-kind="approval"`) || !strings.Contains(body, `data-kind="signin"`) {
		t.Error("filtered by person: want mallory's failed sign-in only")
	}
	if body = page("group=interns&environment=stage"); !strings.Contains(body, "Nothing recorded for this filter") {
		t.Error("filtered by team and environment: want nothing")
	}
	if status, _, _ := f.get(t, client(t), "/audit", ""); status != http.StatusSeeOther {
		t.Errorf("the audit page without a session: %d, want a redirect to sign in", status)
	}
}
