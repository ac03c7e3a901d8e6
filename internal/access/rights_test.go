package access_test

import (
	"strings"
	"testing"

	"github.com/fleetform/fleetform/api/v1alpha1"
	"github.com/fleetform/fleetform/internal/access"
)

// TestRightsNeedTheTipAndTheEnvironment: a right granted at the tip works in an environment
// once promoted there; a right taken away at the tip is gone at once.
func TestRightsNeedTheTipAndTheEnvironment(t *testing.T) {
	granted := policy(t, teams)
	approveDev := access.Request{Action: v1alpha1.ActionApprove, Environments: []string{"dev"}}
	r := access.NewRights()
	if d := r.Decide(paymentsDev, approveDev); d.Allowed {
		t.Fatalf("allowed with no policy: %s", d.Reason)
	}
	r.SetTip(granted)
	if d := r.Decide(paymentsDev, approveDev); d.Allowed || !strings.Contains(d.Reason, "not read yet") {
		t.Errorf("allowed before dev's policies were read: %+v", d)
	}
	r.SetEnvironment("dev", nil) // dev runs a commit from before the policy
	if d := r.Decide(paymentsDev, approveDev); d.Allowed || !strings.Contains(d.Reason, "the policy promoted into dev") {
		t.Errorf("allowed before the policy was promoted into dev: %+v", d)
	}
	r.SetEnvironment("dev", granted)
	if d := r.Decide(paymentsDev, approveDev); !d.Allowed {
		t.Errorf("refused once promoted: %s", d.Reason)
	}
	r.SetTip(policy(t, strings.Replace(teams, "- {action: approve, environments: [dev]}", "", 1)))
	if d := r.Decide(paymentsDev, approveDev); d.Allowed {
		t.Errorf("allowed after the tip took the right away: %s", d.Reason)
	}
	// Authoring is in no environment: the tip alone decides.
	if d := r.Decide(paymentsDev, access.Request{Action: v1alpha1.ActionAuthor, Workspaces: paymentsWork}); !d.Allowed {
		t.Errorf("authoring refused: %s", d.Reason)
	}
	if d := r.Decide(adminToken, approveDev); !d.Allowed {
		t.Errorf("an admin token was refused: %s", d.Reason)
	}
	if got := r.Roles(paymentsDev); len(got) != 1 || got[0] != "payments" {
		t.Errorf("roles = %v", got)
	}
	if !r.Can(paymentsDev, v1alpha1.ActionAuthor) || r.Can(paymentsDev, v1alpha1.ActionTokens) || r.Can(reader, v1alpha1.ActionAuthor) || !r.Can(adminToken, v1alpha1.ActionTokens) {
		t.Error("Can does not say which actions an identity holds a rule for")
	}
}
