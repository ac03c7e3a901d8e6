// Package golden compares test output with golden files, and rewrites them when a test
// runs with -update. Failures show a diff per file.
package golden

import (
	"encoding/json"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// JSON compares v, as indented JSON with a final newline, with the file at path.
func JSON(tb testing.TB, path string, v any, update bool) {
	tb.Helper()
	got, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		tb.Fatal(err)
	}
	File(tb, path, append(got, '\n'), update)
}

// File compares got with the file at path, or rewrites it when update is set.
func File(tb testing.TB, path string, got []byte, update bool) {
	tb.Helper()
	if update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil { //nolint:gosec // golden files are committed test data
			tb.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil { //nolint:gosec // golden files are committed test data
			tb.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		tb.Fatalf("%v (run go test -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		tb.Errorf("%s differs (-want +got); run go test -update if the change is intended:\n%s", path, diff)
	}
}

// Tree compares a set of files (slash-separated path -> content) with the folder dir, or
// replaces the folder's content when update is set.
func Tree(tb testing.TB, dir string, tree map[string][]byte, update bool) {
	tb.Helper()
	if update {
		if err := os.RemoveAll(dir); err != nil {
			tb.Fatal(err)
		}
		for p, content := range tree {
			File(tb, filepath.Join(dir, filepath.FromSlash(p)), content, true)
		}
		return
	}
	want := ReadTree(tb, dir)
	for _, p := range slices.Sorted(maps.Keys(tree)) {
		w, ok := want[p]
		if !ok {
			tb.Errorf("%s: rendered but not in %s (run go test -update to accept):\n%s", p, dir, tree[p])
			continue
		}
		if diff := cmp.Diff(string(w), string(tree[p])); diff != "" {
			tb.Errorf("%s differs from %s (-want +got; run go test -update to accept):\n%s", p, dir, diff)
		}
	}
	for _, p := range slices.Sorted(maps.Keys(want)) {
		if _, ok := tree[p]; !ok {
			tb.Errorf("%s: in %s but no longer rendered", p, dir)
		}
	}
}

// ReadTree reads every file under dir, keyed by slash-separated relative paths.
func ReadTree(tb testing.TB, dir string) map[string][]byte {
	tb.Helper()
	out := map[string][]byte{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		out[filepath.ToSlash(rel)], err = os.ReadFile(p) //nolint:gosec // a test helper reading a test's folder
		return err
	})
	if err != nil {
		tb.Fatalf("read golden folder: %v", err)
	}
	return out
}
