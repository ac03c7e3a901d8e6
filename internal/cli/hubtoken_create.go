package cli

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/fleetform/fleetform/internal/cli/command"
	"github.com/fleetform/fleetform/internal/hub"
	"github.com/fleetform/fleetform/internal/hub/api"
)

type hubTokenCreateOptions struct {
	hubOutputOptions
	expires expiresOption
	kind    string
}

func newHubTokenCreateCmd(e *env) *cobra.Command {
	var o hubTokenCreateOptions
	cmd := &cobra.Command{
		Use: "create NAME",
		Example: "  # a read-only token for dashboards, valid 30 days\n" +
			"  FLEETFORM_HUB_TOKEN=... fleetform hub token create grafana --hub https://hub.example.com --kind read --expires-in 720h\n" +
			"  # a second admin token\n" +
			"  FLEETFORM_HUB_TOKEN=... fleetform hub token create ci --hub https://hub.example.com --kind admin\n" +
			"  # a token for a site's hub relay\n" +
			"  FLEETFORM_HUB_TOKEN=... fleetform hub token create plant-7 --hub https://hub.example.com --kind relay",
		Short: "Issue a read-only (or admin, or relay) token and print it",
		Long: "create issues a token labelled NAME and prints it once: read-only by default (for\n" +
			"dashboards, status and CI), --kind admin, or --kind relay (for `hub relay`: it may only\n" +
			"forward batches of reports, each with its cluster's own token).",
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
			tok, err := c.CreateToken(cmd.Context(), api.TokenRequest{Name: args[0], Kind: o.kind, ExpiresAt: expiresAt})
			if err != nil {
				return err
			}
			return printToken(e, o.out, tok)
		},
	}
	o.hub.BindRequired(cmd)
	o.out.Bind(cmd)
	o.expires.bind(cmd, "the token")
	cmd.Flags().StringVar(&o.kind, "kind", hub.TokenRead, "read, admin or relay (relay: may only forward batches of reports, see hub relay)")
	return cmd
}

// printToken prints a token alone on a line (text), or {"name","token","id"[,"expiresAt"]}.
func printToken(e *env, out command.Output, tok api.IssuedToken) error {
	err := out.Write(e.Stdout, tok, func(w io.Writer) error {
		_, err := fmt.Fprintln(w, tok.Token)
		return err
	})
	if err != nil {
		return err
	}
	return nil
}
