package cli

import (
	"errors"
	"time"

	"github.com/spf13/cobra"

	"github.com/fleetform/fleetform/internal/cli/command"
)

// The hub's token commands: create, list, revoke and rotate (admin token).

func newHubTokenCmd(e *env) *cobra.Command {
	cmd := &cobra.Command{
		Use: "token",
		Example: "  FLEETFORM_HUB_TOKEN=... fleetform hub token list --hub https://hub.example.com\n" +
			"  FLEETFORM_HUB_TOKEN=... fleetform hub token create grafana --hub https://hub.example.com --kind read --expires-in 720h",
		Short: "Issue, list, revoke and rotate hub tokens",
		Long: "token manages the hub's tokens: admin and read-only ones, and the clusters' (issued by\n" +
			"hub register). The hub keeps only their hashes; a token is named by its ID in listings.\n" +
			"Needs the admin token in " + command.HubTokenEnv + ".",
	}
	cmd.AddCommand(newHubTokenCreateCmd(e), newHubTokenListCmd(e), newHubTokenRevokeCmd(e), newHubTokenRotateCmd(e))
	return cmd
}

// expiresOption is the --expires-in flag of the commands that issue a token.
type expiresOption struct{ in time.Duration }

func (o *expiresOption) bind(cmd *cobra.Command, what string) {
	cmd.Flags().DurationVar(&o.in, "expires-in", 0, what+" stops working after this long, e.g. 720h (default: never)")
}

// at is the expiry time the flag asks for (nil: never).
func (o *expiresOption) at() (*time.Time, error) {
	switch {
	case o.in < 0:
		return nil, command.Usage(errors.New("--expires-in must be positive"))
	case o.in == 0:
		return nil, nil
	}
	t := time.Now().Add(o.in).UTC()
	return &t, nil
}
