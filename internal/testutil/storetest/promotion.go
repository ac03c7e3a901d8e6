package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/fleetform/fleetform/internal/hub"
)

func (s suite) testPromotion(t *testing.T) {
	store, _ := s.open(t)
	e := start(t, store, newClock())
	ctx := context.Background()
	e.register("c1", "dev", "large")
	posted := e.clock.Now()
	if err := e.hub.PostDesired(ctx, hub.Desired{Environment: "dev", Revision: "g1", PromotedCommit: "c0ffee",
		Assignments: []hub.DesiredAssignment{assign("shop", "shop-web", "large")}}); err != nil {
		t.Fatal(err)
	}
	e.clock.Advance(5 * time.Minute)
	e.mustReport(hub.Report{Cluster: "c1", Revision: "g1", Status: hub.Compliant})
	changed := e.clock.Now()
	e.clock.Advance(time.Hour)
	e.mustReport(hub.Report{Cluster: "c1", Revision: "g1", Status: hub.Compliant}) // unchanged heartbeat
	src, err := e.hub.Source(ctx, "dev")
	if err != nil {
		t.Fatal(err)
	}
	if src.PromotedCommit != "c0ffee" || !src.PostedAt.Equal(posted) || !src.LastChange.Equal(changed) ||
		src.Rollout.Targets[0].Compliant != 1 {
		t.Fatalf("source %+v; want commit c0ffee posted %s changed %s", src, posted, changed)
	}
	if _, err := e.hub.Source(ctx, "prod"); code(err) != hub.CodeNotFound {
		t.Fatalf("source without desired state: %v", err)
	}
	if ok, err := e.hub.Approved(ctx, "prod", "c0ffee"); err != nil || ok {
		t.Fatalf("approved before approval: %v %v", ok, err)
	}
	if err := e.hub.Approve(ctx, "prod", "c0ffee", "alice"); err != nil {
		t.Fatal(err)
	}
	if ok, err := e.hub.Approved(ctx, "prod", "c0ffee"); err != nil || !ok {
		t.Fatalf("approved after approval: %v %v", ok, err)
	}
	if ok, _ := e.hub.Approved(ctx, "prod", "d00d"); ok {
		t.Fatal("another commit counts as approved")
	}
	if err := e.hub.Record(ctx, hub.Event{Kind: hub.EventPromotion, Environment: "stage", Revision: "c0ffee", Message: "promoted"}); err != nil {
		t.Fatal(err)
	}
	if err := e.hub.Record(ctx, hub.Event{Kind: hub.EventCluster, Environment: "stage"}); code(err) != hub.CodeInvalid {
		t.Fatalf("recording a cluster event: %v", err)
	}
	events, err := e.hub.History(ctx, hub.HistoryFilter{Kind: hub.EventPromotion})
	if err != nil || len(events) != 1 || events[0].Message != "promoted" {
		t.Fatalf("promotion history %+v, %v", events, err)
	}
}

// testAuthoring: the changes of the authoring API, with who made them and what they did.
func (s suite) testAuthoring(t *testing.T) {
	store, _ := s.open(t)
	e := start(t, store, newClock())
	ctx := context.Background()
	if err := e.hub.RecordChange(ctx, hub.Change{Environment: "dev", Revision: "ab12", By: "ci-bot",
		What: "add ClusterType edge in dev"}); err != nil {
		t.Fatal(err)
	}
	if err := e.hub.RecordChange(ctx, hub.Change{Revision: "cd34", By: "ann", What: "add Workload shop",
		PullRequest: "https://github.example/org/cp/pull/3"}); err != nil {
		t.Fatal(err)
	}
	if err := e.hub.RecordChange(ctx, hub.Change{Revision: "ef56", What: "remove Workload shop"}); code(err) != hub.CodeInvalid {
		t.Fatalf("a change without its author: %v", err)
	}
	events, err := e.hub.History(ctx, hub.HistoryFilter{Kind: hub.EventAuthoring})
	if err != nil || len(events) != 2 ||
		events[0].Message != "add Workload shop (by ann, pull request https://github.example/org/cp/pull/3)" || events[0].Environment != "" ||
		events[1].Message != "add ClusterType edge in dev (by ci-bot)" || events[1].Environment != "dev" || events[1].Revision != "ab12" {
		t.Fatalf("authoring history %+v, %v", events, err)
	}
}
