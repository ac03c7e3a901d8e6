package cli_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/fleetform/fleetform/internal/cli"
	"github.com/fleetform/fleetform/internal/dev"
	"github.com/fleetform/fleetform/internal/hub"
	"github.com/fleetform/fleetform/internal/testutil/gittest"
)

// TestSimCommand applies Kalypso's dev environment with --hub, simulates its fleet once,
// and reads the rollout: every simulated cluster is counted at the applied revision.
func TestSimCommand(t *testing.T) {
	t.Setenv("FLEETFORM_HUB_ADMIN_TOKEN", "admin-secret")
	t.Setenv("FLEETFORM_HUB_TOKEN", "admin-secret")
	t.Setenv("FLEETFORM_CACHE_DIR", t.TempDir())
	h := serveHub(t, t.TempDir()+"/hub.db")
	k, gitops := gittest.NewKalypso(t), gittest.NewBare(t)

	fleetformDev(t, cli.ExitFailed, "sim", "--hub", h.url, "--gitops", gitops.Dir, "--env", "dev", "--once") // nothing applied yet
	fleetformDev(t, cli.ExitUsage, "sim", "--hub", h.url, "--gitops", gitops.Dir, "--env", "dev", "--fail-rate", "2")
	fleetform(t, 0, "apply", "--control-plane", k.ControlPlane.Dir, "--env", "dev", "--repo-map", gittest.SvcSrcURL+"="+k.SvcSrc.Dir,
		"--gitops", gitops.Dir, "--hub", h.url)

	var doc struct {
		Revision               string
		Clusters, ClusterTypes int
		Reports, Errors        int64
	}
	out := fleetformDev(t, 0, "sim", "--hub", h.url, "--gitops", gitops.Dir, "--env", "dev", "--clusters-per-type", "7", "--once", "-o", "json")
	if err := json.Unmarshal([]byte(out), &doc); err != nil || doc.Revision != gitops.Tip(t, "dev").String() || doc.Errors != 0 ||
		doc.Clusters != 7*doc.ClusterTypes || doc.Reports != int64(doc.Clusters) {
		t.Fatalf("sim: %+v %v\n%s", doc, err, out)
	}
	var ro hub.Rollout
	if err := json.Unmarshal([]byte(fleetform(t, 0, "status", "--hub", h.url, "--env", "dev", "-o", "json")), &ro); err != nil {
		t.Fatal(err)
	}
	if ro.Revision != doc.Revision || len(ro.Targets) == 0 {
		t.Fatalf("rollout %+v, want targets at %s", ro, doc.Revision)
	}
	for _, tr := range ro.Targets {
		if tr.Clusters != 7 || tr.Compliant != 7 {
			t.Errorf("%s on %s: %d of %d compliant, want 7 of 7", tr.DeploymentTarget, tr.ClusterType, tr.Compliant, tr.Clusters)
		}
	}
	// Again, all failing: the same clusters (tokens rotated) now count as failed.
	fleetformDev(t, 0, "sim", "--hub", h.url, "--gitops", gitops.Dir, "--env", "dev", "--clusters-per-type", "7", "--once", "--fail-rate", "1")
	if err := json.Unmarshal([]byte(fleetform(t, 0, "status", "--hub", h.url, "--env", "dev", "-o", "json")), &ro); err != nil {
		t.Fatal(err)
	}
	for _, tr := range ro.Targets {
		if tr.Clusters != 7 || tr.Failed != 7 {
			t.Errorf("fail rate 1: %s on %s: %d of %d failed", tr.DeploymentTarget, tr.ClusterType, tr.Failed, tr.Clusters)
		}
	}
}

// fleetformDev runs a command of fleetform-dev and returns its stdout; the exit code must be want.
func fleetformDev(t *testing.T, want int, args ...string) string {
	t.Helper()
	var stdout, stderr bytes.Buffer
	if code := dev.Main(t.Context(), args, nil, &stdout, &stderr); code != want {
		t.Fatalf("fleetform-dev %s: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), code, want, stdout.String(), stderr.String())
	}
	return stdout.String()
}
