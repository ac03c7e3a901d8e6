package storetest

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/fleetform/fleetform/internal/hub"
)

// testFutureObservedAt: a report dated further ahead of the hub's clock than the allowed skew
// is rejected with a message naming both times and the skew; one within the skew is
// accepted. A cluster whose stored report is dated in the future (accepted before the hub
// bounded observedAt) takes the next report, newer by arrival, instead of ignoring every
// report until that date.
func (s suite) testFutureObservedAt(t *testing.T) {
	store, _ := s.open(t)
	c := newClock()
	e := start(t, store, c)
	ctx := context.Background()
	e.register("c1", "dev", "large")
	e.register("c2", "dev", "large")
	e.desired("dev", "r1", assign("shop", "shop-web", "large"))

	future := time.Date(2099, 1, 1, 0, 0, 0, 0, time.UTC)
	err := e.report(hub.Report{Cluster: "c1", Revision: "r1", Status: hub.Compliant, ObservedAt: future})
	if code(err) != hub.CodeInvalid {
		t.Fatalf("report from 2099: %v, want it rejected as invalid", err)
	}
	for _, want := range []string{"2099-01-01T00:00:00Z", c.Now().Format(time.RFC3339), "5m0s"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("rejection %q does not say %s", err, want)
		}
	}
	if got := e.cluster("c1"); got.Reported {
		t.Fatalf("the rejected report was stored: %+v", got.ClusterRecord)
	}
	e.mustReport(hub.Report{Cluster: "c1", Revision: "r1", Status: hub.Compliant, ObservedAt: c.Now().Add(4 * time.Minute)})
	e.mustReport(hub.Report{Cluster: "c1", Revision: "r0", Status: hub.Progressing}) // older: ignored
	if got := e.cluster("c1"); got.Revision != "r1" {
		t.Fatalf("a report within the skew was not kept: %+v", got.ClusterRecord)
	}

	// Before the bound: a hub that took anything stored c2's report from 2099.
	e.stop()
	lax := startWith(t, store, c, hub.Options{MaxClockSkew: 100 * 365 * 24 * time.Hour})
	lax.mustReport(hub.Report{Cluster: "c2", Revision: "r0", Status: hub.Progressing, ObservedAt: future})
	lax.stop()
	e = start(t, store, c)
	c.Advance(time.Minute)
	e.mustReport(hub.Report{Cluster: "c2", Revision: "r1", Status: hub.Compliant})
	if got := e.cluster("c2"); got.Revision != "r1" || !got.ObservedAt.Equal(c.Now()) {
		t.Fatalf("c2 after a report newer by arrival: %+v", got.ClusterRecord)
	}
	c.Advance(time.Minute)
	e.mustReport(hub.Report{Cluster: "c2", Revision: "r1", Status: hub.Compliant, ObservedAt: c.Now().Add(-time.Hour)}) // older again: ignored
	if r := e.devRollout()["large/shop-web"]; r.Compliant != 2 || r.Clusters != 2 {
		t.Fatalf("rollout after recovering c2: %+v", r)
	}
	if err := e.hub.Record(ctx, hub.Event{Kind: hub.EventPromotion, Environment: "dev", Time: future}); code(err) != hub.CodeInvalid {
		t.Fatalf("a promotion event from 2099: %v, want it rejected as invalid", err)
	}
}

func (e *env) cluster(name string) hub.ClusterDetail {
	e.t.Helper()
	d, err := e.hub.Cluster(context.Background(), name)
	if err != nil {
		e.t.Fatalf("cluster %s: %v", name, err)
	}
	return d
}
