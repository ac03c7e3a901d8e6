package cli

import (
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/fleetform/fleetform/internal/hub"
	"github.com/fleetform/fleetform/internal/hub/api"
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
			"Needs the admin token in " + hubTokenEnv + ".",
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
		return nil, failed(ExitUsage, errors.New("--expires-in must be positive"))
	case o.in == 0:
		return nil, nil
	}
	t := time.Now().Add(o.in).UTC()
	return &t, nil
}

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
			"  FLEETFORM_HUB_TOKEN=... fleetform hub token create ci --hub https://hub.example.com --kind admin",
		Short: "Issue a read-only (or admin) token and print it",
		Long: "create issues a token labelled NAME and prints it once: read-only by default (for\n" +
			"dashboards, status and CI), or --kind admin.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := o.hub.clientFor(o.out)
			if err != nil {
				return err
			}
			expiresAt, err := o.expires.at()
			if err != nil {
				return err
			}
			tok, err := c.CreateToken(cmd.Context(), api.TokenRequest{Name: args[0], Kind: o.kind, ExpiresAt: expiresAt})
			if err != nil {
				return failed(ExitFailed, err)
			}
			return printToken(e, o.out, tok)
		},
	}
	o.hub.bindRequired(cmd)
	o.out.bind(cmd)
	o.expires.bind(cmd, "the token")
	cmd.Flags().StringVar(&o.kind, "kind", hub.TokenRead, "read or admin")
	return cmd
}

type hubTokenListOptions struct {
	hubOutputOptions
	kind, cluster string
}

func newHubTokenListCmd(e *env) *cobra.Command {
	var o hubTokenListOptions
	cmd := &cobra.Command{
		Use: "list",
		Example: "  FLEETFORM_HUB_TOKEN=... fleetform hub token list --hub https://hub.example.com\n" +
			"  FLEETFORM_HUB_TOKEN=... fleetform hub token list --hub https://hub.example.com --kind cluster --cluster edge-munich-1 -o json",
		Short: "List the hub's tokens (never their secrets)",
		Long: "list prints every token's ID, kind, name or cluster, creation and expiry times and state\n" +
			"(active, expired or revoked); never a secret.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := o.hub.clientFor(o.out)
			if err != nil {
				return err
			}
			ts, err := c.Tokens(cmd.Context(), hub.TokenFilter{Kind: o.kind, Cluster: o.cluster})
			if err != nil {
				return failed(ExitFailed, err)
			}
			return writeOut(e, o.out, api.TokenList{Tokens: ts}, func(w io.Writer) error { return tokensText(w, ts) })
		},
	}
	o.hub.bindRequired(cmd)
	o.out.bind(cmd)
	cmd.Flags().StringVar(&o.kind, "kind", "", "only tokens of this kind: admin, read or cluster")
	cmd.Flags().StringVar(&o.cluster, "cluster", "", "only this cluster's tokens")
	return cmd
}

func tokensText(w io.Writer, ts []hub.TokenInfo) error {
	t := newTable(w, "ID", "KIND", "NAME", "CLUSTER", "CREATED", "EXPIRES", "STATE")
	for _, ti := range ts {
		expires := "never"
		if ti.ExpiresAt != nil {
			expires = ti.ExpiresAt.UTC().Format(time.RFC3339)
		}
		t.row(ti.ID, ti.Kind, dashIfEmpty(ti.Name), dashIfEmpty(ti.Cluster), ti.CreatedAt.UTC().Format(time.RFC3339), expires, ti.State)
	}
	return t.flush()
}

func dashIfEmpty(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

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
			c, err := o.hub.clientFor(o.out)
			if err != nil {
				return err
			}
			ti, err := c.RevokeToken(cmd.Context(), args[0])
			if err != nil {
				return failed(ExitFailed, err)
			}
			return writeOut(e, o.out, ti, func(w io.Writer) error {
				_, err := fmt.Fprintf(w, "revoked %s (%s token %s)\n", ti.ID, ti.Kind, ti.Name+ti.Cluster)
				return err
			})
		},
	}
	o.hub.bindRequired(cmd)
	o.out.bind(cmd)
	return cmd
}

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
			c, err := o.hub.clientFor(o.out)
			if err != nil {
				return err
			}
			expiresAt, err := o.expires.at()
			if err != nil {
				return err
			}
			tok, err := c.RotateToken(cmd.Context(), args[0], api.RotateRequest{ExpiresAt: expiresAt})
			if err != nil {
				return failed(ExitFailed, err)
			}
			return printToken(e, o.out, tok)
		},
	}
	o.hub.bindRequired(cmd)
	o.out.bind(cmd)
	o.expires.bind(cmd, "the new token")
	return cmd
}

// printToken prints a token alone on a line (text), or {"name","token","id"[,"expiresAt"]}.
func printToken(e *env, out outputOption, tok api.IssuedToken) error {
	err := out.write(e.stdout, tok, func(w io.Writer) error {
		_, err := fmt.Fprintln(w, tok.Token)
		return err
	})
	if err != nil {
		return failed(ExitFailed, err)
	}
	return nil
}
