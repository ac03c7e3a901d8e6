package cli

import (
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/fleetform/fleetform/internal/cli/command"
	"github.com/fleetform/fleetform/internal/hub"
	"github.com/fleetform/fleetform/internal/hub/api"
)

type hubTokenListOptions struct {
	hubOutputOptions
	kind, cluster string
}

func newHubTokenListCmd(e *env) *cobra.Command {
	var o hubTokenListOptions
	cmd := &cobra.Command{
		Use: "list",
		Example: "  FLEETFORM_HUB_TOKEN=... fleetform hub token list --hub https://hub.example.com\n" +
			"  FLEETFORM_HUB_TOKEN=... fleetform hub token list --hub https://hub.example.com --kind cluster --cluster edge-munich-1 -o json\n" +
			"  # who is signed in to the web UI (end a session with hub token revoke ID)\n" +
			"  FLEETFORM_HUB_TOKEN=... fleetform hub token list --hub https://hub.example.com --kind session",
		Short: "List the hub's tokens (never their secrets)",
		Long: "list prints every token's ID, kind, name or cluster, creation and expiry times and state\n" +
			"(active, expired or revoked); never a secret. Web UI sessions (kind session) are listed\n" +
			"with --kind session only; revoking one signs its browser out.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := o.hub.ClientFor(o.out)
			if err != nil {
				return err
			}
			ts, err := c.Tokens(cmd.Context(), hub.TokenFilter{Kind: o.kind, Cluster: o.cluster})
			if err != nil {
				return err
			}
			return writeOut(e, o.out, api.TokenList{Tokens: ts}, func(w io.Writer) error { return tokensText(w, ts) })
		},
	}
	o.hub.BindRequired(cmd)
	o.out.Bind(cmd)
	cmd.Flags().StringVar(&o.kind, "kind", "", "only tokens of this kind: admin, read, cluster, relay or session (web UI sessions, listed only when asked for)")
	cmd.Flags().StringVar(&o.cluster, "cluster", "", "only this cluster's tokens")
	return cmd
}

func tokensText(w io.Writer, ts []hub.TokenInfo) error {
	t := command.NewTable(w, "ID", "KIND", "NAME", "CLUSTER", "CREATED", "EXPIRES", "STATE")
	for _, ti := range ts {
		expires := "never"
		if ti.ExpiresAt != nil {
			expires = ti.ExpiresAt.UTC().Format(time.RFC3339)
		}
		t.Row(ti.ID, ti.Kind, dashIfEmpty(ti.Name), dashIfEmpty(ti.Cluster), ti.CreatedAt.UTC().Format(time.RFC3339), expires, ti.State)
	}
	return t.Flush()
}

func dashIfEmpty(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
