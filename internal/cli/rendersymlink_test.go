package cli_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fleetform/fleetform/internal/cli"
	"github.com/fleetform/fleetform/internal/testutil/gittest"
)

// renderKalypso runs `render` of Kalypso's sample environment dev into out and returns the
// exit code and stderr. It writes .github/tracking/Promoted_Commit_Id, large/README.md,
// large/observability-prometheus/{namespace,platform-config,reconciler}.yaml and the
// README.md of command-center, drone and small.
func renderKalypso(t *testing.T, out string) (int, string) {
	t.Helper()
	k := gittest.NewKalypso(t)
	return run(t, "render", "--control-plane", k.ControlPlane.Dir, "--env", "dev",
		"--repo-map="+gittest.SvcSrcURL+"="+k.SvcSrc.Dir, "--out", out)
}

// outsideFiles creates, next to --out, a folder holding files render must never touch, and
// returns it.
func outsideFiles(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "elsewhere")
	writeTree(t, dir, map[string]string{"file": "precious\n", "dir/reconciler.yaml": "precious\n",
		"dir/observability-prometheus/reconciler.yaml": "precious\n"})
	return dir
}

// checkOutside requires the outside folder to hold exactly what outsideFiles put there.
func checkOutside(t *testing.T, dir string) {
	t.Helper()
	got := gittest.ReadDir(t, dir)
	want := map[string]string{"file": "precious\n", "dir/reconciler.yaml": "precious\n",
		"dir/observability-prometheus/reconciler.yaml": "precious\n"}
	if len(got) != len(want) {
		t.Errorf("outside --out: %v, want %v", got, want)
	}
	for p, content := range want {
		if got[p] != content {
			t.Errorf("outside --out, %s = %q, want %q", p, got[p], content)
		}
	}
}

func symlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

// TestRenderRefusesSymlinksInOut: a symbolic link inside --out where render writes a file,
// or on the way to one (a cluster-type or deployment-target folder, .github), is never
// followed, whether it points outside --out or inside: render stops with an error naming
// every such link, before writing or removing anything.
func TestRenderRefusesSymlinksInOut(t *testing.T) {
	tests := []struct {
		name  string
		links map[string]string // link (under out) -> target ("@" stands for the outside folder)
	}{
		{"file", map[string]string{"large/observability-prometheus/reconciler.yaml": "@/file"}},
		{"file pointing inside --out", map[string]string{"large/observability-prometheus/reconciler.yaml": "../README.md"}},
		{"dangling file", map[string]string{"large/README.md": "@/missing"}},
		{".github", map[string]string{".github": "@/dir"}},
		{".github/tracking", map[string]string{".github/tracking": "@/dir"}},
		{"cluster-type folder", map[string]string{"large": "@/dir"}},
		{"deployment-target folder", map[string]string{"large/observability-prometheus": "@/dir/observability-prometheus"}},
		{"several", map[string]string{"small": "@/dir", "drone/README.md": "@/file", ".github": "@/dir"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			outside := outsideFiles(t)
			out := filepath.Join(t.TempDir(), "out")
			writeTree(t, out, map[string]string{"command-center/stale.yaml": "stale\n", "notes.md": "mine\n"})
			for link, target := range tt.links {
				symlink(t, strings.Replace(target, "@", outside, 1), filepath.Join(out, filepath.FromSlash(link)))
			}
			code, stderr := renderKalypso(t, out)
			if code != cli.ExitFailed {
				t.Errorf("exit %d, want %d; stderr:\n%s", code, cli.ExitFailed, stderr)
			}
			for link := range tt.links {
				if want := filepath.Join(out, filepath.FromSlash(link)) + " is a symbolic link"; !strings.Contains(stderr, want) {
					t.Errorf("stderr does not say %q:\n%s", want, stderr)
				}
				if _, err := os.Readlink(filepath.Join(out, filepath.FromSlash(link))); err != nil {
					t.Errorf("the link %s is gone: %v", link, err)
				}
			}
			checkOutside(t, outside)
			// Nothing was written or removed: the stale file is still there, no README written.
			got := gittest.ReadDir(t, out)
			if got["command-center/stale.yaml"] != "stale\n" || got["notes.md"] != "mine\n" || got["command-center/README.md"] != "" {
				t.Errorf("--out changed: %v", got)
			}
		})
	}
}

// TestRenderThroughOutSymlink: --out itself may be a symbolic link to a folder (the user
// chose it); the tree is written into that folder.
func TestRenderThroughOutSymlink(t *testing.T) {
	real := filepath.Join(t.TempDir(), "real")
	if err := os.Mkdir(real, 0o755); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "out")
	symlink(t, real, out)
	if code, stderr := renderKalypso(t, out); code != cli.ExitOK {
		t.Fatalf("exit %d:\n%s", code, stderr)
	}
	got := gittest.ReadDir(t, real)
	if got["large/observability-prometheus/reconciler.yaml"] == "" || got[".github/tracking/Promoted_Commit_Id"] == "" {
		t.Errorf("the tree is not in the folder --out points to: %v", got)
	}
}

// TestRenderRemovesStaleSymlinks: a stale entry inside a rendered cluster-type folder that
// is a symbolic link is removed as a link: what it points to is untouched.
func TestRenderRemovesStaleSymlinks(t *testing.T) {
	outside := outsideFiles(t)
	out := filepath.Join(t.TempDir(), "out")
	symlink(t, filepath.Join(outside, "file"), filepath.Join(out, "large", "gone", "reconciler.yaml"))
	symlink(t, filepath.Join(outside, "dir"), filepath.Join(out, "large", "gone-too"))
	symlink(t, filepath.Join(outside, "dir"), filepath.Join(out, "small", "observability-prometheus", "sub"))
	if code, stderr := renderKalypso(t, out); code != cli.ExitOK {
		t.Fatalf("exit %d:\n%s", code, stderr)
	}
	for _, link := range []string{"large/gone/reconciler.yaml", "large/gone-too", "small/observability-prometheus/sub"} {
		if _, err := os.Lstat(filepath.Join(out, filepath.FromSlash(link))); !os.IsNotExist(err) {
			t.Errorf("the stale link %s is still there (%v)", link, err)
		}
	}
	checkOutside(t, outside)
	if got := gittest.ReadDir(t, out); got["large/observability-prometheus/reconciler.yaml"] == "" {
		t.Errorf("not rendered: %v", got)
	}
}
