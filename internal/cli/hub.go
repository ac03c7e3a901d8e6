package cli

import (
	"github.com/spf13/cobra"
)

func newHubCmd(e *env) *cobra.Command {
	cmd := &cobra.Command{
		Use: "hub",
		Example: "  FLEETFORM_HUB_ADMIN_TOKEN=... fleetform hub serve --db sqlite:hub.db\n" +
			"  FLEETFORM_HUB_TOKEN=... fleetform hub register edge-1 --hub http://127.0.0.1:8080 --env dev --cluster-type edge",
		Short: "Run the deployment observability hub, and register clusters and tokens on it",
		Long: "The hub records what fleetform scheduled (apply --hub posts it) and what every cluster\n" +
			"reports, and answers what runs where: rollout, history, environment diff and drift.",
	}
	cmd.AddCommand(newHubServeCmd(e), newHubRegisterCmd(e), newHubTokenCmd(e), newHubRelayCmd(e), newHubWhoAmICmd(e))
	return cmd
}
