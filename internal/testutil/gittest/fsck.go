package gittest

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// Fsck runs `git fsck --strict` on the repository at dir (bare, or a work tree) and fails
// the test on anything git finds wrong: objects git would refuse to receive or check out,
// such as a tree entry named .git.
func Fsck(tb testing.TB, dir string) {
	tb.Helper()
	if out, err := gitCommand(context.Background(), dir, "fsck", "--strict", "--no-progress", "--no-dangling"); err != nil {
		tb.Errorf("git fsck --strict %s: %v\n%s", dir, err, out)
	}
}

// Checked makes the repository refuse, on push, objects git's fsck finds wrong
// (receive.fsckObjects), and runs Fsck on it when the test ends: every test that writes to
// it then checks that what it wrote is a tree git accepts. It returns r. The test is
// skipped when the git CLI is not installed.
func (r *Repo) Checked(tb testing.TB) *Repo {
	tb.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		tb.Skip("git CLI not installed: the repository cannot be checked with git fsck")
	}
	if out, err := gitCommand(tb.Context(), r.Dir, "config", "receive.fsckObjects", "true"); err != nil {
		tb.Fatalf("git config receive.fsckObjects %s: %v\n%s", r.Dir, err, out)
	}
	tb.Cleanup(func() { Fsck(tb, r.Dir) }) // t.Context() is done by now
	return r
}

// gitCommand runs git on the repository at dir with no user or system configuration.
func gitCommand(ctx context.Context, dir string, args ...string) ([]byte, error) {
	gitDir := dir
	if st, err := os.Stat(filepath.Join(dir, ".git")); err == nil && st.IsDir() {
		gitDir = filepath.Join(dir, ".git")
	}
	cmd := exec.CommandContext(ctx, "git", append([]string{"--git-dir", gitDir}, args...)...) //nolint:gosec // a test helper running git with the test's arguments
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
	return cmd.CombinedOutput()
}
