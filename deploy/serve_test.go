// Package deploy_test checks what runs fleetform serve outside this repository: the
// Dockerfile (and the static build it makes), the Helm chart in helm/fleetform (rendered
// with the Helm SDK and every object decoded strictly into its Kubernetes type), and the
// systemd unit in systemd/.
package deploy_test

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fleetform/fleetform/internal/cli"
	"github.com/fleetform/fleetform/internal/testutil/gittest"
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

// TestServeArgs: the arguments the image, the chart and the systemd unit give `fleetform
// serve` parse as its flags (no unknown flag, no value of the wrong type). It needs the serve
// command in this build, and is skipped, saying so, without it.
func TestServeArgs(t *testing.T) {
	sources := map[string][]string{
		"the Dockerfile's CMD":         dockerfileCMD(t),
		"the systemd unit's ExecStart": systemdServeArgs(t),
	}
	for name, values := range map[string]string{"SQLite": sqliteFull, "PostgreSQL": postgres3} {
		m := mustRender(t, values)
		pod := m.statefulSets
		if len(pod) == 1 {
			sources["the chart's args ("+name+")"] = containerArgs(t, pod[0].Spec.Template.Spec)
		} else if len(m.deployments) == 1 {
			sources["the chart's args ("+name+")"] = containerArgs(t, m.deployments[0].Spec.Template.Spec)
		}
	}
	if len(sources) != 4 {
		t.Fatalf("found the serve arguments of %d sources, want 4", len(sources))
	}
	var stdout, stderr bytes.Buffer
	cli.Main(t.Context(), []string{"serve", "--help"}, strings.NewReader(""), &stdout, &stderr)
	if strings.Contains(stderr.String(), `unknown command "serve"`) {
		t.Skip("this build has no `fleetform serve`: the arguments are not checked against its flags")
	}
	for where, args := range sources {
		if len(args) == 0 || args[0] != "serve" {
			t.Errorf("%s: arguments %q do not start with serve", where, args)
			continue
		}
		stdout.Reset()
		stderr.Reset()
		code := cli.Main(t.Context(), append(slices.Clone(args), "--help"), strings.NewReader(""), &stdout, &stderr)
		if code != 0 {
			t.Errorf("%s: `fleetform %s` does not parse (exit %d): %s", where, strings.Join(args, " "), code, stderr.String())
		}
	}
}

// validateConfigFile checks a fleetform.yaml as fleetform reads it: decoded strictly, its
// credentials entries checked, against a control plane of one empty environment.
func validateConfigFile(t *testing.T, where string, content []byte) {
	t.Helper()
	dir := t.TempDir()
	config := filepath.Join(dir, "fleetform.yaml")
	if err := os.WriteFile(config, content, 0o600); err != nil {
		t.Fatal(err)
	}
	controlPlane := filepath.Join(dir, "control-plane")
	if err := os.MkdirAll(filepath.Join(controlPlane, "environments", "dev"), 0o700); err != nil {
		t.Fatal(err)
	}
	env := "apiVersion: scheduler.kalypso.io/v1alpha1\nkind: Environment\nmetadata: {name: dev}\n" +
		"spec:\n  controlPlane: {repo: \"\", branch: \"\", path: ./environments/dev}\n"
	if err := os.WriteFile(filepath.Join(controlPlane, "environments", "dev", "environment.yaml"), []byte(env), 0o600); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	args := []string{"validate", "--config", config, "--control-plane", controlPlane}
	if code := cli.Main(t.Context(), args, strings.NewReader(""), &stdout, &stderr); code != 0 {
		t.Errorf("%s: fleetform refuses the config file (exit %d): %s\n%s", where, code, stderr.String(), content)
	}
}
