package compose_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fleetform/fleetform/internal/controlplane"
)

// loadDev writes files (path -> content) into a temporary folder-layout control plane and
// loads environment dev from it. Paths under environments/dev/ are dev's own content; the
// others are common. Any load diagnostic fails the test.
func loadDev(t *testing.T, files map[string]string) *controlplane.Snapshot {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cp, err := controlplane.Open(t.Context(), dir, controlplane.Options{})
	if err != nil {
		t.Fatal(err)
	}
	snap, err := cp.Load(t.Context(), "dev")
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range snap.Diagnostics {
		t.Errorf("load diagnostic: %v", d)
	}
	if t.Failed() {
		t.FailNow()
	}
	return snap
}

// environment returns an Environment document for dev with the given precedence mode.
func environment(precedence string) string {
	return "apiVersion: scheduler.kalypso.io/v1alpha1\nkind: Environment\nmetadata:\n  name: dev\nspec:\n" +
		"  configPrecedence: " + precedence + "\n"
}

// lineOf returns the 1-based line of the first line of text that starts with prefix after
// its indentation, so that tests name lines by content rather than by counting.
func lineOf(t *testing.T, text, prefix string) int {
	t.Helper()
	for i, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(strings.TrimLeft(l, " "), prefix) {
			return i + 1
		}
	}
	t.Fatalf("no line starts with %q", prefix)
	return 0
}

// pair finds a cluster type and a deployment target of a snapshot by name.
func pair(t *testing.T, s *controlplane.Snapshot, ct, dt string) (*controlplane.ClusterType, *controlplane.DeploymentTarget) {
	t.Helper()
	var c *controlplane.ClusterType
	var d *controlplane.DeploymentTarget
	for _, x := range s.ClusterTypes {
		if x.Metadata.Name == ct {
			c = x
		}
	}
	for _, x := range s.DeploymentTargets {
		if x.Name == dt {
			d = x
		}
	}
	if c == nil || d == nil {
		t.Fatalf("cluster type %q or deployment target %q not loaded", ct, dt)
	}
	return c, d
}
