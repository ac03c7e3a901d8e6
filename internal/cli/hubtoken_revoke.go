package cli

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"
)

func newHubTokenRevokeCmd(e *env) *cobra.Command {
	var o hubOutputOptions
	cmd := &cobra.Command{
		Use:     "revoke ID",
		Example: "  FLEETFORM_HUB_TOKEN=... fleetform hub token revoke 3f9c2a7d1e4b5a60 --hub https://hub.example.com",
		Short:   "Revoke a token",
		Long: "revoke makes the token with this ID (hub token list shows them) stop working: at once on\n" +
			"the hub that answers, within 30 s on the other replicas. The last active admin token\n" +
			"cannot be revoked: rotate it.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := o.hub.ClientFor(o.out)
			if err != nil {
				return err
			}
			ti, err := c.RevokeToken(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			return writeOut(e, o.out, ti, func(w io.Writer) error {
				_, err := fmt.Fprintf(w, "revoked %s (%s token %s)\n", ti.ID, ti.Kind, ti.Name+ti.Cluster)
				return err
			})
		},
	}
	o.hub.BindRequired(cmd)
	o.out.Bind(cmd)
	return cmd
}
