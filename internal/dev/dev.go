// Package dev is fleetform-dev, the developers' command line: a synthetic fleet for
// benchmarks (gen-fleet), simulated clusters reporting to a hub (sim), a load test of the
// hub's report API (loadtest) and a local OpenID Connect provider for demos (oidc-provider). None of it operates a fleet, so none of it ships in fleetform.
package dev

import (
	"context"
	"io"

	"github.com/spf13/cobra"

	"github.com/fleetform/fleetform/internal/cli/command"
)

// env is what commands run with: streams and a logger.
type env = command.Env

// Run runs fleetform-dev until it ends or a SIGINT or SIGTERM stops it (command.Run).
func Run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return command.Run(newRoot, args, stdin, stdout, stderr)
}

// Main runs fleetform-dev and returns the process exit code.
func Main(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return command.Main(ctx, newRoot, args, stdin, stdout, stderr)
}

func newRoot(e *env) *cobra.Command {
	root := command.Root(e, &cobra.Command{
		Use: "fleetform-dev",
		Example: "  fleetform-dev gen-fleet --out /tmp/fleet\n" +
			"  FLEETFORM_HUB_TOKEN=... fleetform-dev loadtest --hub http://127.0.0.1:8080 --clusters 10000",
		Short: "fleetform's developer tools: synthetic fleets, simulated clusters and load tests",
	})
	root.AddCommand(newGenFleetCmd(e), newSimCmd(e), newLoadtestCmd(e), newOIDCProviderCmd(e))
	return root
}

// writeOut prints v in the format of out.
func writeOut(e *env, out command.Output, v any, text func(io.Writer) error) error {
	return out.Write(e.Stdout, v, text)
}

func shortSHA(s string) string { return s[:min(len(s), 12)] }
