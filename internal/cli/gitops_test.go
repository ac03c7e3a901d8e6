package cli_test

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/fleetform/fleetform/internal/cli"
	"github.com/fleetform/fleetform/internal/render"
	"github.com/fleetform/fleetform/internal/testutil/gittest"
)

// applyDoc is the part of `apply -o json` these tests read.
type applyDoc struct {
	Commit   string `json:"commit"`
	NoChange bool   `json:"noChange"`
	Refused  string `json:"refused"`
	Plan     struct {
		Rendered   int `json:"rendered"`
		Skipped    int `json:"skipped"`
		MassDelete *struct {
			Removed int `json:"removed"`
			Owned   int `json:"owned"`
		} `json:"massDelete"`
		Deferred []string `json:"deferred"`
	} `json:"plan"`
}

// runApply runs `apply -o json` with args and returns its exit code and document.
func runApply(t *testing.T, args ...string) (int, applyDoc) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := cli.Main(t.Context(), append([]string{"apply", "-o", "json"}, args...), nil, &stdout, &stderr)
	var doc applyDoc
	if err := json.Unmarshal(stdout.Bytes(), &doc); err != nil {
		t.Fatalf("exit %d: %v\nstdout:\n%s\nstderr:\n%s", code, err, stdout.String(), stderr.String())
	}
	return code, doc
}

// TestApplyExitCodes: apply exits 0 when it committed and when there was nothing to
// commit; 3 when a mass deletion is refused (nothing written); 1 when the control plane
// has errors (what could be applied is, removals are deferred).
func TestApplyExitCodes(t *testing.T) {
	k := gittest.NewKalypso(t)
	repoMap := "--repo-map=" + gittest.SvcSrcURL + "=" + k.SvcSrc.Dir
	t.Run("commit, then no change", func(t *testing.T) {
		gitopsRepo := gittest.NewBare(t)
		args := []string{"--control-plane", k.ControlPlane.Dir, "--env", "dev", repoMap, "--gitops", gitopsRepo.Dir}
		code, doc := runApply(t, args...)
		if code != cli.ExitOK || doc.Commit == "" || doc.NoChange {
			t.Fatalf("first apply: exit %d, %+v", code, doc)
		}
		code, doc = runApply(t, args...)
		if code != cli.ExitOK || doc.Commit != "" || !doc.NoChange || doc.Plan.Rendered != 0 || doc.Plan.Skipped != 1 {
			t.Errorf("second apply: exit %d, %+v", code, doc)
		}
		if n := commits(t, gitopsRepo.Dir); n != "1" {
			t.Errorf("%s commits on dev, want 1", n)
		}
	})
	t.Run("mass deletion refused", func(t *testing.T) {
		// A repository Kalypso wrote, with two targets it left behind next to the current one.
		gitopsRepo := gittest.NewBare(t)
		stale := map[string]string{"large/README.md": render.ReadmeText}
		for _, dt := range []string{"observability-prometheus", "old-a", "old-b"} {
			stale["large/"+dt+"/namespace.yaml"] = "kind: Namespace\n"
		}
		tip := gitopsRepo.Commit(t, "dev", stale)
		args := []string{"--control-plane", k.ControlPlane.Dir, "--env", "dev", repoMap, "--gitops", gitopsRepo.Dir}
		code, doc := runApply(t, args...)
		if code != cli.ExitRefused || doc.Refused == "" || doc.Commit != "" || doc.Plan.MassDelete == nil ||
			doc.Plan.MassDelete.Removed != 2 || doc.Plan.MassDelete.Owned != 3 {
			t.Errorf("exit %d, %+v (mass delete %+v)", code, doc, doc.Plan.MassDelete)
		}
		if got := gitopsRepo.Tip(t, "dev"); got != tip {
			t.Errorf("a refused apply moved dev to %s", got)
		}
		code, doc = runApply(t, append(args, "--allow-mass-delete")...)
		if code != cli.ExitOK || doc.Commit == "" {
			t.Errorf("--allow-mass-delete: exit %d, %+v", code, doc)
		}
	})
	t.Run("input errors", func(t *testing.T) {
		gitopsRepo := gittest.NewBare(t)
		args := []string{"--control-plane", k.ControlPlane.Dir, "--env", "dev", "--gitops", gitopsRepo.Dir}
		if code, doc := runApply(t, append(args, repoMap)...); code != cli.ExitOK {
			t.Fatalf("exit %d, %+v", code, doc)
		}
		// Without the repository map the workload source is unreachable: exit 1, and the
		// assignment's folder is kept.
		code, doc := runApply(t, args...)
		if code != cli.ExitFailed || len(doc.Plan.Deferred) != 1 || doc.Plan.Deferred[0] != "large/observability-prometheus" {
			t.Errorf("exit %d, %+v", code, doc)
		}
		if files := gitopsRepo.Files(t, "dev"); files["large/observability-prometheus/reconciler.yaml"] == "" {
			t.Error("the unreachable workload's files were removed")
		}
	})
}

func commits(t *testing.T, dir string) string {
	t.Helper()
	return gitOut(t, dir, "rev-list", "--count", "dev")
}
