package gitops_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fleetform/fleetform/internal/gitops"
)

// gitIn runs git in dir and returns its output.
func gitIn(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), "git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t",
		"GIT_COMMITTER_EMAIL=t@example.com", "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// TestWriteFilesOnACheckedOutBranch: files written to the branch a work tree has checked
// out (what `fleetform init` makes) land in the work tree and its index too, so that it
// stays clean; a file with uncommitted changes is refused and the branch does not move.
func TestWriteFilesOnACheckedOutBranch(t *testing.T) {
	dir := t.TempDir()
	gitIn(t, dir, "init", "--quiet", "--initial-branch", "main")
	for name, content := range map[string]string{"pin.yaml": "commit: a\n", "gone.yaml": "x: 1\n", "other.yaml": "y: 2\n"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	gitIn(t, dir, "add", "-A")
	gitIn(t, dir, "commit", "--quiet", "-m", "init")
	w := newWriter(t, gitops.Options{})
	files := map[string][]byte{"pin.yaml": []byte("commit: b\n"), "new/file.yaml": []byte("z: 3\n"), "gone.yaml": nil}
	if _, err := w.WriteFiles(t.Context(), dir, "main", files, "pin", gitops.CommitOptions{}); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "pin.yaml")); string(got) != "commit: b\n" {
		t.Errorf("pin.yaml in the work tree: %q", got)
	}
	if _, err := os.Stat(filepath.Join(dir, "gone.yaml")); !os.IsNotExist(err) {
		t.Errorf("gone.yaml is still in the work tree: %v", err)
	}
	if status := gitIn(t, dir, "status", "--porcelain"); status != "" {
		t.Errorf("the work tree is not clean after the write:\n%s", status)
	}
	if err := os.WriteFile(filepath.Join(dir, "pin.yaml"), []byte("commit: mine\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tip := gitIn(t, dir, "rev-parse", "main")
	_, err := w.WriteFiles(t.Context(), dir, "main", map[string][]byte{"pin.yaml": []byte("commit: c\n")}, "pin", gitops.CommitOptions{})
	if err == nil || !strings.Contains(err.Error(), "uncommitted changes of pin.yaml") {
		t.Errorf("a write over uncommitted changes: %v, want it refused", err)
	}
	if now := gitIn(t, dir, "rev-parse", "main"); now != tip {
		t.Errorf("main moved from %s to %s", tip, now)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "pin.yaml")); string(got) != "commit: mine\n" {
		t.Errorf("the uncommitted change was lost: %q", got)
	}
}
