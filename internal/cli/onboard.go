package cli

import "github.com/spf13/cobra"

func newOnboardCmd(e *env) *cobra.Command {
	cmd := &cobra.Command{
		Use: "onboard",
		Example: "  fleetform onboard app shop --repo https://github.com/org/shop --workspace retail --app-dir ../shop --target functional-test=dev\n" +
			"  fleetform onboard app shop --repo https://github.com/org/shop --workspace retail --target uat=stage --commit\n" +
			"  FLEETFORM_HUB_TOKEN=... fleetform onboard cluster plant-lyon-1 --env dev --cluster-type plant-lyon --hub https://hub.example.com -o yaml",
		Short: "Onboard a new application or cluster",
	}
	cmd.AddCommand(newOnboardAppCmd(e), newOnboardClusterCmd(e))
	return cmd
}
