package cli_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/fleetform/fleetform/internal/hub/api"
)

// TestHistoryAudit: approvals and token changes are in the history with their actor, found
// by several kinds at once and by person.
func TestHistoryAudit(t *testing.T) {
	t.Setenv("FLEETFORM_HUB_ADMIN_TOKEN", "admin-secret")
	t.Setenv("FLEETFORM_HUB_TOKEN", "admin-secret")
	h := serveHub(t, t.TempDir()+"/hub.db")
	fleetform(t, 0, "approve", "--hub", h.url, "--env", "prod", "--commit", strings.Repeat("c0ffee12", 5), "--by", "ann")
	fleetform(t, 0, "hub", "token", "create", "--hub", h.url, "dashboard")
	var hist api.HistoryList
	out := fleetform(t, 0, "history", "--hub", h.url, "--kind", "approval,token", "-o", "json")
	if err := json.Unmarshal([]byte(out), &hist); err != nil || len(hist.Events) != 2 {
		t.Fatalf("history --kind approval,token: %v\n%s", err, out)
	}
	for _, ev := range hist.Events {
		if ev.Actor == nil || !ev.Actor.Admin || !strings.Contains(ev.Actor.Reason, "is an admin token") {
			t.Errorf("%s event's actor: %+v", ev.Kind, ev.Actor)
		}
	}
	if hist.Events[0].Kind != "token" || hist.Events[1].Kind != "approval" {
		t.Errorf("kinds: %+v", hist.Events)
	}
	actor := hist.Events[0].Actor.Token
	mustContain(t, "history --actor", fleetform(t, 0, "history", "--hub", h.url, "--actor", actor), `approval\s+prod\s.*approved by ann\s+token `+actor)
	out = fleetform(t, 0, "history", "--hub", h.url, "--actor", "nobody", "-o", "json")
	if err := json.Unmarshal([]byte(out), &hist); err != nil || len(hist.Events) != 0 {
		t.Fatalf("history --actor nobody: %v\n%s", err, out)
	}
}
