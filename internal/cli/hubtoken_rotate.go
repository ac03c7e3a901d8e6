package cli

import (
	"github.com/spf13/cobra"

	"github.com/fleetform/fleetform/internal/hub/api"
)

type hubTokenRotateOptions struct {
	hubOutputOptions
	expires expiresOption
}

func newHubTokenRotateCmd(e *env) *cobra.Command {
	var o hubTokenRotateOptions
	cmd := &cobra.Command{
		Use:     "rotate ID",
		Example: "  FLEETFORM_HUB_TOKEN=... fleetform hub token rotate 3f9c2a7d1e4b5a60 --hub https://hub.example.com --expires-in 720h",
		Short:   "Replace a token by a new one and print it",
		Long: "rotate issues a token of the same kind, name and cluster as the token with this ID and\n" +
			"prints it once; the old one is revoked (a cluster's is deleted, as by register --rotate).",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := o.hub.ClientFor(o.out)
			if err != nil {
				return err
			}
			expiresAt, err := o.expires.at()
			if err != nil {
				return err
			}
			tok, err := c.RotateToken(cmd.Context(), args[0], api.RotateRequest{ExpiresAt: expiresAt})
			if err != nil {
				return err
			}
			return printToken(e, o.out, tok)
		},
	}
	o.hub.BindRequired(cmd)
	o.out.Bind(cmd)
	o.expires.bind(cmd, "the new token")
	return cmd
}
