package authoring

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fleetform/fleetform/api/v1alpha1"
)

// TestApplyToDirChangesAllOrNothing: when one file of a change cannot be written, no file
// of it is: the others keep their content (no file is half written), and no temporary file
// is left behind.
func TestApplyToDirChangesAllOrNothing(t *testing.T) {
	dir := t.TempDir()
	for name, content := range map[string]string{"a.yaml": "a: 1\n", "z": "a file where a folder would go\n"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(dir, "d"), 0o750); err != nil {
		t.Fatal(err)
	}
	for bad, why := range map[string]string{"z/b.yaml": "z is a file", "d": "d is a folder"} {
		err := applyToDir(dir, map[fileKey][]byte{{path: "a.yaml"}: []byte("a: 2\n"), {path: bad}: []byte("b: 1\n")})
		if err == nil || !strings.Contains(err.Error(), why) || !strings.Contains(err.Error(), "nothing was changed") {
			t.Fatalf("applyToDir with %s: %v, want an error saying %q", bad, err, why)
		}
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "a.yaml")); string(got) != "a: 1\n" || strings.Join(names, " ") != "a.yaml d z" {
		t.Errorf("after the failure: a.yaml %q, files %v; want a.yaml unchanged and nothing else", got, names)
	}

	if err := applyToDir(dir, map[fileKey][]byte{{path: "a.yaml"}: []byte("a: 2\n"), {path: "z"}: nil, {path: "n/b.yaml"}: []byte("b: 1\n")}); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{"a.yaml": "a: 2\n", "n/b.yaml": "b: 1\n"} {
		if got, err := os.ReadFile(filepath.Join(dir, name)); err != nil || string(got) != want {
			t.Errorf("%s: %q, %v; want %q", name, got, err, want)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "z")); !os.IsNotExist(err) {
		t.Errorf("z was not removed: %v", err)
	}
}

// TestNoWriteThroughALink: a folder of the control plane that is a symbolic link (the loader
// does not follow it) is refused as the place of a change, and nothing is written where it
// points.
func TestNoWriteThroughALink(t *testing.T) {
	dir, outside := t.TempDir(), t.TempDir()
	devControlPlane(t, dir)
	if err := os.Symlink(outside, filepath.Join(dir, "environments", "dev", "cluster-types")); err != nil {
		t.Fatal(err)
	}
	_, err := Apply(t.Context(), Request{ControlPlane: dir, Mode: ModeWrite, Operations: []Operation{
		{Op: OpAdd, Kind: v1alpha1.KindClusterType, Env: "dev", Name: "plant", Labels: map[string]string{"region": "west"}}}})
	if err == nil || !strings.Contains(err.Error(), "symbolic link") {
		t.Errorf("add through a linked folder: %v, want a refusal", err)
	}
	if entries, _ := os.ReadDir(outside); len(entries) != 0 {
		t.Errorf("written where the link points: %v", entries)
	}
}
