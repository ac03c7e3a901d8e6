package gitops_test

import (
	"reflect"
	"testing"

	"github.com/fleetform/fleetform/internal/gitops"
	"github.com/fleetform/fleetform/internal/testutil/gittest"
)

func TestFolders(t *testing.T) {
	repo := gittest.NewBare(t).Checked(t)
	tip := repo.Commit(t, "dev", map[string]string{
		"README.md":                           "notes",
		"clusters/.github/tracking/x":         "hidden",
		"clusters/east/README.md":             "east",
		"clusters/east/api/reconciler.yaml":   "a",
		"clusters/east/batch/namespace.yaml":  "b",
		"clusters/west/README.md":             "west",
		"clusters/west/api/reconciler.yaml":   "a",
		"elsewhere/ignored/x/reconciler.yaml": "x",
	})
	w := gitops.NewWriter(gitops.Options{CacheDir: t.TempDir()})
	commit, folders, err := w.Folders(t.Context(), repo.URL(), "dev", "clusters/")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{"east": {"api", "batch"}, "west": {"api"}}
	if commit != tip || !reflect.DeepEqual(folders, want) {
		t.Fatalf("Folders = %s %v, want %s %v", commit, folders, tip, want)
	}
	if _, folders, err = w.Folders(t.Context(), repo.URL(), "dev", "missing"); err != nil || len(folders) != 0 {
		t.Fatalf("missing path: %v %v", folders, err)
	}
	if commit, _, err = w.Folders(t.Context(), repo.URL(), "prod", ""); err != nil || !commit.IsZero() {
		t.Fatalf("missing branch: %s %v", commit, err)
	}
}
