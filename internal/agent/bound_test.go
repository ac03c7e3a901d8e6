package agent

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/fleetform/fleetform/internal/hub"
)

func TestBoundKeepsFailingTargetsFirst(t *testing.T) {
	var deps []hub.DeploymentReport
	for i := range 1500 {
		status := hub.Ready
		switch {
		case i%100 == 0:
			status = hub.Failed // 15 failed
		case i%10 == 0:
			status = hub.DeploymentProgress // 135 progressing
		}
		deps = append(deps, hub.DeploymentReport{DeploymentTarget: fmt.Sprintf("t%04d", 1499-i), Status: status, Revision: "abc"})
	}
	in := hub.Report{Cluster: "c", Revision: "r", Status: hub.NonCompliant, Message: "platform failing", Deployments: deps}
	out := Bound(in)

	if len(out.Deployments) != MaxDeployments {
		t.Fatalf("%d deployments, want %d", len(out.Deployments), MaxDeployments)
	}
	count := map[hub.DeploymentStatus]int{}
	for i, d := range out.Deployments {
		count[d.Status]++
		if i > 0 && out.Deployments[i-1].DeploymentTarget >= d.DeploymentTarget {
			t.Fatalf("deployments not sorted by target: %s then %s", out.Deployments[i-1].DeploymentTarget, d.DeploymentTarget)
		}
	}
	if count[hub.Failed] != 15 || count[hub.DeploymentProgress] != 135 || count[hub.Ready] != 850 {
		t.Fatalf("kept %v, want every failed (15) and progressing (135) target and 850 ready ones", count)
	}
	if want := "500 more deployment targets not listed; platform failing"; out.Message != want {
		t.Fatalf("message %q, want %q", out.Message, want)
	}
	if len(in.Deployments) != 1500 || in.Message != "platform failing" {
		t.Fatal("Bound changed its input")
	}
}

func TestBoundCutsLongStrings(t *testing.T) {
	msg := strings.Repeat("é", MaxMessage) // 2 bytes each
	out := Bound(hub.Report{
		Message:     msg,
		Revision:    strings.Repeat("a", 300),
		Deployments: []hub.DeploymentReport{{DeploymentTarget: "t", Revision: strings.Repeat("b", 300)}},
	})
	if len(out.Message) > MaxMessage || !utf8.ValidString(out.Message) || !strings.HasSuffix(out.Message, "…") {
		t.Fatalf("message of %d bytes (valid UTF-8: %v), want at most %d, valid, ending with …",
			len(out.Message), utf8.ValidString(out.Message), MaxMessage)
	}
	if len(out.Revision) != MaxRevision || len(out.Deployments[0].Revision) != MaxRevision {
		t.Fatalf("revisions of %d and %d bytes, want %d", len(out.Revision), len(out.Deployments[0].Revision), MaxRevision)
	}
	short := hub.Report{Message: "ok", Revision: "r"}
	if got := Bound(short); got.Message != "ok" || got.Revision != "r" {
		t.Fatalf("Bound changed a report within bounds: %+v", got)
	}
}
