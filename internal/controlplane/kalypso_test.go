package controlplane_test

import (
	"testing"

	"github.com/fleetform/fleetform/internal/controlplane"
	"github.com/fleetform/fleetform/internal/testutil/gittest"
)

func TestLoadKalypsoFixture(t *testing.T) {
	k := gittest.NewKalypso(t)
	cp, err := controlplane.Open(t.Context(), k.ControlPlane.Dir, controlplane.Options{RepoMap: k.RepoMap})
	if err != nil {
		t.Fatal(err)
	}
	if cp.Layout() != controlplane.LayoutKalypso {
		t.Fatalf("layout = %q, want kalypso", cp.Layout())
	}
	snap, err := cp.Load(t.Context(), "dev")
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range snap.Diagnostics {
		t.Errorf("diagnostic: %v", d)
	}
	if got := len(snap.ClusterTypes); got != 4 {
		t.Errorf("cluster types = %d, want 4", got)
	}
	if got := len(snap.Templates); got != 4 {
		t.Errorf("templates = %d, want 4", got)
	}
	if got := len(snap.DeploymentTargets); got != 1 || snap.DeploymentTargets[0].Name != "observability-prometheus" {
		t.Fatalf("deployment targets = %+v", snap.DeploymentTargets)
	}
	dt := snap.DeploymentTargets[0]
	if dt.Workspace != "platform-team" || dt.Labels["stack"] != "observability" || dt.Labels["workload"] != "observability" {
		t.Errorf("target labels = %v workspace %q", dt.Labels, dt.Workspace)
	}
	if snap.Revisions.Common != k.Main.String() || !snap.Revisions.Pinned {
		t.Errorf("revisions = %+v, want common %s pinned", snap.Revisions, k.Main)
	}
}
