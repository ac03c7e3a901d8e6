package promote

import (
	"strings"
	"testing"
	"time"

	"github.com/fleetform/fleetform/api/v1alpha1"
	"github.com/fleetform/fleetform/internal/hub"
)

var now = time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC) // a Friday

func rollout(targets ...hub.TargetRollout) *hub.Rollout {
	return &hub.Rollout{Environment: "dev", Revision: "a1b2c3d4e5", Targets: targets}
}

func target(compliant, clusters int) hub.TargetRollout {
	return hub.TargetRollout{Workload: "shop", DeploymentTarget: "shop-web", ClusterType: "large", Clusters: clusters, Compliant: compliant}
}

func TestCheck(t *testing.T) {
	stage := Gates{Environment: "stage", From: "dev", MinCompliantPercent: 100, Soak: 30 * time.Minute}
	ok := Evidence{Commit: "c0ffee1234", SourcePin: "c0ffee1234", SourceGitOpsCommit: "c0ffee1234",
		Rollout: rollout(target(4, 4)), DesiredCommit: "c0ffee1234", DesiredPostedAt: now.Add(-2 * time.Hour),
		LastChange: now.Add(-time.Hour), Now: now}
	tests := []struct {
		name  string
		gates Gates
		ev    func(Evidence) Evidence
		want  []string // substrings, one per reason, in order
	}{
		{"all gates pass", stage, func(e Evidence) Evidence { return e }, nil},
		{"below the threshold", stage, func(e Evidence) Evidence { e.Rollout = rollout(target(3, 4)); return e },
			[]string{"dev: 3 of 4 clusters compliant at revision a1b2c3d, 100% required (deployment target shop-web on large)"}},
		{"at the threshold", Gates{Environment: "stage", From: "dev", MinCompliantPercent: 75},
			func(e Evidence) Evidence { e.Rollout = rollout(target(3, 4)); return e }, nil},
		{"no reports", stage, func(e Evidence) Evidence { e.Rollout = rollout(hub.TargetRollout{DeploymentTarget: "x"}); return e },
			[]string{"dev: no cluster reports any deployment target at revision a1b2c3d, 100% required"}},
		{"no desired state", stage, func(e Evidence) Evidence { e.Rollout = nil; return e },
			[]string{"dev: the hub has no desired state"}},
		{"never verified in the source", stage, func(e Evidence) Evidence { e.SourcePin, e.SourceGitOpsCommit = "0ld0ld0", "0ld0ld0"; return e },
			[]string{"dev is pinned to commit 0ld0ld0, not c0ffee1", "dev's GitOps branch carries commit 0ld0ld0, not c0ffee1: apply dev first"}},
		{"rendered from another commit", stage, func(e Evidence) Evidence { e.DesiredCommit = "0ld0ld0"; return e },
			[]string{"dev: the hub's latest desired revision a1b2c3d was rendered from commit 0ld0ld0, not c0ffee1"}},
		// Not compliant: one reason, not also "compliant for 2m of the soak".
		{"below the threshold, changed lately", stage, func(e Evidence) Evidence {
			e.Rollout, e.LastChange = rollout(target(0, 5)), now.Add(-2*time.Minute)
			return e
		}, []string{"dev: 0 of 5 clusters compliant at revision a1b2c3d, 100% required (deployment target shop-web on large); the 30m0s soak starts once it is compliant"}},
		{"soak not over", stage, func(e Evidence) Evidence { e.LastChange = now.Add(-12 * time.Minute); return e },
			[]string{"dev: unchanged and compliant for 12m0s of the 30m0s soak"}},
		{"approval missing", Gates{Environment: "prod", From: "stage", MinCompliantPercent: 100, Approval: true},
			func(e Evidence) Evidence { return e }, []string{"prod requires an approval of commit c0ffee1: fleetform approve --env prod --commit c0ffee1"}},
		{"approval given", Gates{Environment: "prod", From: "stage", MinCompliantPercent: 100, Approval: true},
			func(e Evidence) Evidence { e.Approved = true; return e }, nil},
		{"first environment only checks freezes", Gates{Environment: "dev", MinCompliantPercent: 100},
			func(e Evidence) Evidence { e.Rollout = nil; return e }, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Check(tt.gates, tt.ev(ok))
			if len(got) != len(tt.want) {
				t.Fatalf("reasons %q, want %d", got, len(tt.want))
			}
			for i, w := range tt.want {
				if !strings.Contains(got[i], w) {
					t.Errorf("reason %d = %q, want it to contain %q", i, got[i], w)
				}
			}
		})
	}
}

func TestFreezeWindows(t *testing.T) {
	windows := []v1alpha1.FreezeWindow{
		{From: "2026-12-20T00:00:00Z", To: "2027-01-03T00:00:00Z", Reason: "holidays"},
		{Weekly: &v1alpha1.WeeklyWindow{From: "Fri 16:00", To: "Mon 08:00"}, TimeZone: "Europe/Berlin", Reason: "no weekend changes"},
	}
	var parsed []Window
	for _, w := range windows {
		p, err := parseWindow(w)
		if err != nil {
			t.Fatal(err)
		}
		parsed = append(parsed, p)
	}
	tests := []struct {
		at     time.Time
		reason string
	}{
		{time.Date(2026, 12, 24, 12, 0, 0, 0, time.UTC), "holidays"},
		{time.Date(2026, 11, 20, 14, 59, 0, 0, time.UTC), ""},                  // Fri 15:59 in Berlin
		{time.Date(2026, 11, 20, 15, 0, 0, 0, time.UTC), "no weekend changes"}, // Fri 16:00 in Berlin
		{time.Date(2026, 11, 22, 23, 0, 0, 0, time.UTC), "no weekend changes"}, // Mon 00:00 in Berlin
		{time.Date(2026, 11, 23, 7, 0, 0, 0, time.UTC), ""},                    // Mon 08:00 in Berlin
	}
	for _, tt := range tests {
		w, frozen := Active(parsed, tt.at)
		if frozen != (tt.reason != "") || w.Reason != tt.reason {
			t.Errorf("at %s: frozen=%v %q, want %q", tt.at, frozen, w.Reason, tt.reason)
		}
	}
	for _, bad := range []v1alpha1.FreezeWindow{
		{From: "yesterday", To: "2027-01-03T00:00:00Z"},
		{From: "2027-01-03T00:00:00Z", To: "2026-01-03T00:00:00Z"},
		{Weekly: &v1alpha1.WeeklyWindow{From: "Funday 16:00", To: "Mon 08:00"}},
		{Weekly: &v1alpha1.WeeklyWindow{From: "Fri 16:00", To: "Mon 8am"}},
		{Weekly: &v1alpha1.WeeklyWindow{From: "Fri 16:00", To: "Mon 08:00"}, TimeZone: "Mars/Olympus"},
	} {
		if _, err := parseWindow(bad); err == nil {
			t.Errorf("parseWindow(%+v): want an error", bad)
		}
	}
}

// TestRefusalKey: a refusal is recorded again when a count changes (clusters reporting, now
// failing), not when only a duration does (a soak's time).
func TestRefusalKey(t *testing.T) {
	res := func(reasons ...string) Result { return Result{Commit: "c0ffee1", Reasons: reasons} }
	zero := refusalKey(res("dev: 0 of 25 clusters compliant at revision 7c1d2e3, 100% required"))
	if failing := refusalKey(res("dev: 22 of 25 clusters compliant at revision 7c1d2e3, 100% required")); failing == zero {
		t.Error("a count that changed keeps the refusal's key")
	}
	soak := func(held string) string {
		return refusalKey(res("dev: unchanged and compliant for " + held + " of the 30m0s soak at revision 7c1d2e3"))
	}
	if soak("2m26s") != soak("12m0s") || soak("41s") != soak("1h0m0s") {
		t.Error("a soak's time changes the refusal's key")
	}
}
