package cli_test

import (
	"strings"
	"testing"

	"github.com/fleetform/fleetform/internal/hub/api"
	"github.com/fleetform/fleetform/internal/testutil/gittest"
)

// TestAuthoringThroughServe: an authoring command given --hub sends its change to fleetform
// serve, which decides it by its access policies and commits it on its control plane; a
// token the policies grant nothing is refused (exit 3) and nothing is written.
func TestAuthoringThroughServe(t *testing.T) {
	cp, gitopsRepo := gittest.NewBare(t), gittest.NewBare(t).Checked(t)
	cp.Commit(t, "main", serveControlPlane(gitopsRepo.Dir))
	s := startServe(t, []string{"FLEETFORM_HUB_ADMIN_TOKEN=admin-token"}, "--control-plane", cp.Dir, "--interval", "1h")
	viewer, err := s.client.CreateToken(t.Context(), api.TokenRequest{Name: "viewer"})
	if err != nil {
		t.Fatal(err)
	}
	add := []string{"add", "workload", "basket", "--workspace", "retail", "--hub", s.url}

	t.Setenv("FLEETFORM_HUB_TOKEN", viewer.Token)
	before := cp.Tip(t, "main")
	code, out, errOut := runFF(t, add...)
	if code != 3 || !strings.Contains(errOut, "no AccessPolicy") || cp.Tip(t, "main") != before {
		t.Fatalf("a read-only token without a role: exit %d\n%s\n%s", code, out, errOut)
	}
	if code, _, errOut := runFF(t, append(add, "--commit")...); code != 2 || !strings.Contains(errOut, "drop --commit") {
		t.Fatalf("--hub with --commit: exit %d\n%s", code, errOut)
	}

	t.Setenv("FLEETFORM_HUB_TOKEN", "admin-token")
	if code, out, errOut := runFF(t, append(add, "--dry-run")...); code != 0 || !strings.Contains(out, "add Workload basket") || cp.Tip(t, "main") != before {
		t.Fatalf("dry run through serve: exit %d\n%s\n%s", code, out, errOut)
	}
	code, out, errOut = runFF(t, add...)
	if code != 0 || cp.Tip(t, "main") == before {
		t.Fatalf("the admin token through serve: exit %d\n%s\n%s", code, out, errOut)
	}
	if msg := gitOut(t, cp.Dir, "log", "-1", "--format=%an%n%B", "main"); !strings.Contains(msg, "Changed-By: admin") {
		t.Errorf("the commit does not say who made it:\n%s", msg)
	}
}
