package gitops_test

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/fleetform/fleetform/internal/controlplane"
	"github.com/fleetform/fleetform/internal/gitops"
	"github.com/fleetform/fleetform/internal/schedule"
	"github.com/fleetform/fleetform/internal/testutil/gittest"
)

// loadKalypso loads environment dev of Kalypso's sample control plane.
func loadKalypso(t *testing.T) gitops.Input {
	t.Helper()
	k := gittest.NewKalypso(t)
	cp, err := controlplane.Open(t.Context(), k.ControlPlane.Dir, controlplane.Options{RepoMap: k.RepoMap})
	if err != nil {
		t.Fatal(err)
	}
	snap, err := cp.Load(t.Context(), "dev")
	if err != nil {
		t.Fatal(err)
	}
	return gitops.Input{Snapshot: snap, Schedule: schedule.Schedule(snap)}
}

// gitCLI runs git on a repository and returns its output.
func gitCLI(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), "git", append([]string{"--git-dir", dir}, args...)...)
	cmd.Env = append(cmd.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}

func TestApplyKalypsoIntoEmptyRepository(t *testing.T) {
	in := loadKalypso(t)
	repo := gittest.NewBare(t).Checked(t)
	in.Target = gitops.Target{Repo: repo.Dir, Branch: "dev", Path: "."}
	w := gitops.NewWriter(gitops.Options{CacheDir: t.TempDir()})
	res, err := w.Apply(t.Context(), in, gitops.CommitOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Commit.IsZero() {
		t.Fatal("no commit")
	}
	gitCLI(t, repo.Dir, "fsck", "--strict")
	files := gitCLI(t, repo.Dir, "ls-tree", "-r", "--name-only", "dev")
	want := []string{".fleetform/clustertypes/command-center", ".fleetform/clustertypes/drone", ".fleetform/clustertypes/large",
		".fleetform/clustertypes/small", ".fleetform/index", ".fleetform/keys/command-center", ".fleetform/keys/drone",
		".fleetform/keys/large", ".fleetform/keys/small", ".fleetform/workloads/command-center", ".fleetform/workloads/drone",
		".fleetform/workloads/large", ".fleetform/workloads/small", ".github/tracking/Promoted_Commit_Id", "command-center/README.md", "drone/README.md",
		"large/README.md", "large/observability-prometheus/namespace.yaml", "large/observability-prometheus/platform-config.yaml",
		"large/observability-prometheus/reconciler.yaml", "small/README.md"}
	if got := strings.Fields(files); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("files:\n%s\nwant %v", files, want)
	}
	cfg := gitCLI(t, repo.Dir, "show", "dev:large/observability-prometheus/platform-config.yaml")
	if !strings.Contains(cfg, "CLUSTER_NAME: Large") {
		t.Errorf("platform-config.yaml:\n%s", cfg)
	}
	// Nothing changed: no commit.
	again, err := w.Apply(t.Context(), in, gitops.CommitOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !again.Commit.IsZero() || !again.Plan.NoChange() {
		t.Errorf("second apply wrote %s: %+v", again.Commit, again.Plan.Changes)
	}
	if again.Plan.Rendered != 0 || again.Plan.Skipped != 1 {
		t.Errorf("second apply rendered %d, skipped %d; want 0 and 1", again.Plan.Rendered, again.Plan.Skipped)
	}
	if n := strings.Count(gitCLI(t, repo.Dir, "log", "--oneline", "dev"), "\n"); n != 1 {
		t.Errorf("%d commits, want 1", n)
	}
}
