package cli

import (
	"fmt"

	"github.com/spf13/cobra"
)

// newDevCmd groups developer tooling: commands for benchmarks and tests, not for
// operating a fleet. It is hidden from the command list.
func newDevCmd(e *env) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "dev",
		Example: "  fleetform dev gen-fleet --out /tmp/fleet",
		Short:   "Developer tooling: synthetic fleets for benchmarks and tests",
		Hidden:  true,
		Args:    cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			return failed(ExitUsage, fmt.Errorf("dev needs a subcommand: gen-fleet"))
		},
	}
	cmd.AddCommand(newGenFleetCmd(e))
	return cmd
}
