package fleet_test

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fleetform/fleetform/internal/controlplane"
	"github.com/fleetform/fleetform/internal/fleet"
	"github.com/fleetform/fleetform/internal/hub"
	"github.com/fleetform/fleetform/internal/hub/sqlite"
	"github.com/fleetform/fleetform/internal/testutil/gittest"
	"github.com/fleetform/fleetform/internal/testutil/storetest"
)

// TestFourEyes: a promotion into an environment with approvals {count: 2, distinctFromAuthor:
// true} needs two approvals from identities other than the author of the commit's change;
// the author's approval is refused; the promotion is recorded with who made it.
func TestFourEyes(t *testing.T) {
	ctx := t.Context()
	store, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "hub.db"))
	if err != nil {
		t.Fatal(err)
	}
	h := hub.New(store, hub.Options{})
	storetest.RunHub(t, h)
	r := gittest.NewBare(t)
	tip := r.Commit(t, "main", map[string]string{"environments/prod/env.yaml": environment("prod",
		"  promotion:\n    approvals: {count: 2, distinctFromAuthor: true}\n")}).String()
	f := fleet.New(fleet.Config{ControlPlane: r.Dir, CacheDir: t.TempDir(), Hub: fleet.LocalHub(h)})

	ada, bob, cid := &hub.Actor{Email: "ada@example.com"}, &hub.Actor{Email: "bob@example.com"}, &hub.Actor{Token: "cid-ci"}
	if err := h.RecordChange(ctx, hub.Change{Revision: tip, By: "ada@example.com", What: "add Environment prod", Actor: ada}); err != nil {
		t.Fatal(err)
	}
	rule := hub.ApprovalRule{Count: 2, DistinctFromAuthor: true}
	approve := func(a *hub.Actor) error {
		return h.ApproveAs(ctx, hub.Approval{Environment: "prod", Commit: tip, By: a.String(), Actor: a, Rule: rule})
	}
	if err := approve(ada); hub.ErrorCode(err) != hub.CodeForbidden {
		t.Fatalf("the author's approval: %v, want forbidden", err)
	}
	promoteProd := func() (*fleet.PromoteResult, error) {
		return f.Promote(ctx, fleet.PromoteRequest{To: "prod", Now: time.Now(), By: bob, Actor: "bob@example.com"})
	}
	for _, a := range []*hub.Actor{nil, bob} {
		if a != nil {
			if err := approve(a); err != nil {
				t.Fatal(err)
			}
		}
		res, err := promoteProd()
		if !fleet.IsRefused(err) || res.Promoted || !strings.Contains(strings.Join(res.Reasons, "\n"),
			"requires 2 approval(s) of commit "+tip[:7]+" from distinct identities other than its author") {
			t.Fatalf("promotion with too few approvals: %+v, %v", res, err)
		}
	}
	if err := approve(cid); err != nil {
		t.Fatal(err)
	}
	if res, err := promoteProd(); err != nil || !res.Promoted {
		t.Fatalf("promotion with two approvals: %+v, %v", res, err)
	}
	events, err := h.History(ctx, hub.HistoryFilter{Kind: hub.EventPromotion, Actor: "bob@example.com"})
	if err != nil || len(events) != 3 || !strings.HasPrefix(events[0].Message, "promoted") || events[0].Actor.Email != "bob@example.com" {
		t.Fatalf("the promotions recorded as bob's: %+v, %v", events, err)
	}
}

// TestFourEyesValidation: a count out of range is a located error.
func TestFourEyesValidation(t *testing.T) {
	r := gittest.NewBare(t)
	r.Commit(t, "main", map[string]string{"environments/prod/env.yaml": environment("prod",
		"  promotion:\n    approvals: {count: -1}\n")})
	f := fleet.New(fleet.Config{ControlPlane: r.Dir, CacheDir: t.TempDir()})
	v, err := f.Validate(t.Context(), "")
	if err == nil || !slices.ContainsFunc(v.Diagnostics, func(d controlplane.Diagnostic) bool {
		return strings.Contains(d.Error(), "env.yaml") && strings.Contains(d.Error(), "spec.promotion.approvals.count")
	}) {
		t.Fatalf("validation of count -1: %v\n%+v", err, v)
	}
}
