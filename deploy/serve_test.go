// Package deploy_test checks what runs fleetform serve outside this repository: the
// Dockerfile, and the static build it makes.
package deploy_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/fleetform/fleetform/internal/gittest"
)

// repoPath returns a path of the repository, from its root.
func repoPath(t *testing.T, elem ...string) string {
	t.Helper()
	return filepath.Join(append([]string{gittest.ModuleRoot(t)}, elem...)...)
}

// readRepoFile reads a file of the repository.
func readRepoFile(t *testing.T, elem ...string) []byte {
	t.Helper()
	data, err := os.ReadFile(repoPath(t, elem...))
	if err != nil {
		t.Fatal(err)
	}
	return data
}
