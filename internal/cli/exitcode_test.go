package cli_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/fleetform/fleetform/internal/cli"
	"github.com/fleetform/fleetform/internal/testutil/gittest"
)

func TestExitCodes(t *testing.T) {
	k := gittest.NewKalypso(t)
	repoMap := "--repo-map=" + gittest.SvcSrcURL + "=" + k.SvcSrc.Dir
	tests := []struct {
		name string
		args []string
		want int
	}{
		{"ok", []string{"schedule", "--control-plane", k.ControlPlane.Dir, "--env", "dev", repoMap}, cli.ExitOK},
		{"input problems", []string{"validate", "--control-plane", k.ControlPlane.Dir}, cli.ExitFailed},
		{"unknown environment", []string{"schedule", "--control-plane", k.ControlPlane.Dir, "--env", "prod"}, cli.ExitFailed},
		{"missing --env", []string{"schedule", "--control-plane", k.ControlPlane.Dir}, cli.ExitUsage},
		{"bad output format", []string{"schedule", "--control-plane", k.ControlPlane.Dir, "--env", "dev", "-o", "xml"}, cli.ExitUsage},
		{"unknown flag", []string{"schedule", "--frobnicate"}, cli.ExitUsage},
		{"unknown command", []string{"frobnicate"}, cli.ExitUsage},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			if got := cli.Main(t.Context(), tt.args, nil, &stdout, &stderr); got != tt.want {
				t.Errorf("exit code = %d, want %d\nstdout:\n%s\nstderr:\n%s", got, tt.want, stdout.String(), stderr.String())
			}
		})
	}
}

// TestPromoteRefusedExitsThree: a refused promotion is exit 3, not a failure.
func TestPromoteRefusedExitsThree(t *testing.T) {
	r := gittest.NewBare(t)
	env := func(name, extra string) string {
		return "apiVersion: scheduler.kalypso.io/v1alpha1\nkind: Environment\nmetadata: {name: " + name + "}\n" +
			"spec:\n  controlPlane: {repo: https://example.com/cp, branch: main, path: .}\n" + extra
	}
	r.Commit(t, "main", map[string]string{
		"environments/dev/env.yaml":   env("dev", ""),
		"environments/stage/env.yaml": env("stage", "  promotion: {from: dev}\n"),
	})
	var stdout, stderr bytes.Buffer
	if got := cli.Main(t.Context(), []string{"promote", "--control-plane", r.Dir, "--to", "stage", "-o", "json"}, nil, &stdout, &stderr); got != cli.ExitRefused {
		t.Fatalf("exit code = %d, want %d\nstdout:\n%s\nstderr:\n%s", got, cli.ExitRefused, stdout.String(), stderr.String())
	}
	if !strings.Contains(stdout.String(), `"promoted": false`) || stderr.Len() > 0 {
		t.Errorf("stdout:\n%s\nstderr:\n%s", stdout.String(), stderr.String())
	}
}
