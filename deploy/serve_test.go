// Package deploy_test checks what runs fleetform serve outside this repository: the
// Dockerfile (and the static build it makes), the Helm chart in helm/fleetform (rendered
// with the Helm SDK and every object decoded strictly into its Kubernetes type), and the
// systemd unit in systemd/.
package deploy_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fleetform/fleetform/internal/cli"
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

// validateConfigFile checks a fleetform.yaml as fleetform reads it: decoded strictly, its
// credentials entries checked, against an empty control plane.
func validateConfigFile(t *testing.T, where string, content []byte) {
	t.Helper()
	dir := t.TempDir()
	config := filepath.Join(dir, "fleetform.yaml")
	if err := os.WriteFile(config, content, 0o600); err != nil {
		t.Fatal(err)
	}
	controlPlane := filepath.Join(dir, "control-plane")
	if err := os.Mkdir(controlPlane, 0o700); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	args := []string{"validate", "--config", config, "--control-plane", controlPlane}
	if code := cli.Main(t.Context(), args, strings.NewReader(""), &stdout, &stderr); code != 0 {
		t.Errorf("%s: fleetform refuses the config file (exit %d): %s\n%s", where, code, stderr.String(), content)
	}
}
