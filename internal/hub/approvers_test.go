package hub_test

import (
	"slices"
	"testing"

	"github.com/fleetform/fleetform/internal/hub"
)

// TestDistinctApproversMatchThePersonNamed: an approval the admin token records for a person
// (by email, in any case) and that person's own approval count once, and an admin approval
// naming the author is left out like the author's own.
func TestDistinctApproversMatchThePersonNamed(t *testing.T) {
	bob := &hub.Actor{Issuer: "https://idp", Subject: "u2", Email: "bob@example.com"}
	ada := &hub.Actor{Issuer: "https://idp", Subject: "u1", Email: "ada@example.com"}
	admin := &hub.Actor{Token: "root", Admin: true}
	approval := func(by string, a *hub.Actor) hub.Event {
		return hub.Event{Kind: hub.EventApproval, Environment: "prod", Revision: "c1", Message: "approved by " + by, Actor: a}
	}
	// Newest first, as the history answers.
	approvals := []hub.Event{approval("ada@example.com", admin), approval("Bob@Example.com", admin), approval("bob", bob),
		approval("carol", admin)}
	authors := []hub.Event{{Kind: hub.EventAuthoring, Revision: "c1", Actor: ada}}
	if got, want := hub.DistinctApprovers(approvals, authors, "c1"), []string{"carol", "bob"}; !slices.Equal(got, want) {
		t.Errorf("approvers %q, want %q", got, want)
	}
}
