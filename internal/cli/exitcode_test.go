package cli_test

import (
	"bytes"
	"testing"

	"github.com/fleetform/fleetform/internal/cli"
	"github.com/fleetform/fleetform/internal/gittest"
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
