package cli

import "github.com/spf13/cobra"

func newOnboardCmd(e *env) *cobra.Command {
	cmd := &cobra.Command{
		Use: "onboard",
		Example: "  fleetform onboard app shop --repo https://github.com/org/shop --workspace retail --app-dir ../shop --target functional-test=dev\n" +
			"  fleetform onboard app shop --repo https://github.com/org/shop --workspace retail --target uat=stage --commit",
		Short: "Onboard a new application",
	}
	cmd.AddCommand(newOnboardAppCmd(e))
	return cmd
}
