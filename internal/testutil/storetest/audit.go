package storetest

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/fleetform/fleetform/internal/hub"
)

// testAudit: writes are recorded with their actor, found by kinds, person, team and revision,
// and an author may not approve the promotion of their change under four-eyes.
func (s suite) testAudit(t *testing.T) {
	store, _ := s.open(t)
	e := start(t, store, newClock())
	ctx := context.Background()
	ada := &hub.Actor{Issuer: "https://idp", Subject: "ada-1", Name: "Ada", Email: "Ada@example.com",
		Groups: []string{"payments-devs"}, Roles: []string{"payments"}, Reason: "ada may author: allowed by role payments"}
	bob := &hub.Actor{Issuer: "https://idp", Subject: "bob-1", Email: "bob@example.com", Groups: []string{"approvers"}}
	bot := &hub.Actor{Token: "release-bot", Roles: []string{"release"}}
	if err := e.hub.RecordChange(ctx, hub.Change{Environment: "dev", Revision: "c1", By: "ada", What: "set ConfigMap x", Actor: ada}); err != nil {
		t.Fatal(err)
	}
	rule := hub.ApprovalRule{Count: 2, DistinctFromAuthor: true}
	err := e.hub.ApproveAs(ctx, hub.Approval{Environment: "prod", Commit: "c1", By: "ada", Actor: ada, Rule: rule})
	if code(err) != hub.CodeForbidden || !strings.Contains(err.Error(), "may not approve") {
		t.Fatalf("the author approving: %v", err)
	}
	for _, a := range []hub.Approval{
		{Environment: "prod", Commit: "c1", By: "bob", Actor: bob, Rule: rule},
		{Environment: "prod", Commit: "c1", By: "bob again", Actor: bob, Rule: rule},
		{Environment: "prod", Commit: "c1", By: "release-bot", Actor: bot, Rule: rule},
		{Environment: "prod", Commit: "c2", By: "bob", Actor: bob, Rule: rule},
	} {
		if err := e.hub.ApproveAs(ctx, a); err != nil {
			t.Fatal(err)
		}
	}
	if got, err := e.hub.Approvers(ctx, "prod", "c1", true); err != nil || !slices.Equal(got, []string{"bob", "release-bot"}) {
		t.Fatalf("approvers of c1: %v, %v", got, err)
	}
	if err := e.hub.Approve(ctx, "prod", "c1", "ada"); err != nil { // the admin's record of whom it names
		t.Fatal(err)
	}
	if got, _ := e.hub.Approvers(ctx, "prod", "c1", false); len(got) != 3 {
		t.Fatalf("approvers without four-eyes: %v", got)
	}
	if err := e.hub.RecordTokenChange(ctx, bot, hub.TokenChangeCreated, hub.TokenInfo{ID: "t1", Kind: hub.TokenRead, Name: "dash"}); err != nil {
		t.Fatal(err)
	}
	if err := e.hub.RecordSignInFailure(ctx, &hub.Actor{Token: "unknown"}, "unknown token"); err != nil {
		t.Fatal(err)
	}
	kinds := func(f hub.HistoryFilter) []string {
		t.Helper()
		events, err := e.hub.History(ctx, f)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, ev := range events {
			out = append(out, ev.Kind+":"+ev.Actor.String())
		}
		return out
	}
	for _, c := range []struct {
		f    hub.HistoryFilter
		want []string
	}{
		{hub.HistoryFilter{Kind: "authoring, signin"}, []string{"signin:token unknown", "authoring:Ada@example.com"}},
		{hub.HistoryFilter{Actor: "ada@EXAMPLE.com"}, []string{"authoring:Ada@example.com"}},
		{hub.HistoryFilter{Actor: "ada-1", Kind: "approval"}, nil},
		{hub.HistoryFilter{Actor: "release-bot"}, []string{"token:token release-bot", "approval:token release-bot"}},
		{hub.HistoryFilter{Group: "approvers", Environment: "prod", Revision: "c2"}, []string{"approval:bob@example.com"}},
		{hub.HistoryFilter{Group: "payments"}, []string{"authoring:Ada@example.com"}},
		{hub.HistoryFilter{Group: "payments-dev"}, nil},
	} {
		if got := kinds(c.f); !slices.Equal(got, c.want) {
			t.Errorf("history %+v: %v, want %v", c.f, got, c.want)
		}
	}
	events, err := e.hub.History(ctx, hub.HistoryFilter{Kind: hub.EventAuthoring})
	if err != nil || len(events) != 1 || events[0].Actor.Reason != ada.Reason || !slices.Equal(events[0].Actor.Groups, ada.Groups) {
		t.Fatalf("the authoring event's actor: %+v, %v", events, err)
	}
}
