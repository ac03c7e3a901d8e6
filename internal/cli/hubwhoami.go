package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/fleetform/fleetform/internal/cli/command"
	"github.com/fleetform/fleetform/internal/fleet"
	"github.com/fleetform/fleetform/internal/hub/api"
)

type hubWhoAmIOptions struct {
	hubOutputOptions
	ask api.WhoAmIQuery
}

func newHubWhoAmICmd(e *env) *cobra.Command {
	var o hubWhoAmIOptions
	cmd := &cobra.Command{
		Use: "whoami",
		Example: "  FLEETFORM_HUB_TOKEN=... fleetform hub whoami --hub https://fleetform.example.com\n" +
			"  # may this CI job promote hello-world into stage?\n" +
			"  FLEETFORM_HUB_TOKEN=$OIDC_TOKEN fleetform hub whoami --hub https://fleetform.example.com --may promote --env stage --workload hello-world",
		Short: "Show who the hub takes the token for, its roles, and whether it may do an action",
		Long: "whoami prints who FLEETFORM_HUB_TOKEN speaks for (a person or CI job signed in through an\n" +
			"identity provider, or a hub token), the roles the control plane's access policies give it,\n" +
			"and, with --may, whether it may do that action there, with the reason. It exits 3 when it\n" +
			"may not.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := o.hub.ClientFor(o.out)
			if err != nil {
				return err
			}
			me, err := c.WhoAmI(cmd.Context(), o.ask)
			if err != nil {
				return err
			}
			if err := writeOut(e, o.out, me, func(w io.Writer) error { return whoAmIText(w, me) }); err != nil {
				return err
			}
			if me.Decision != nil && !me.Decision.Allowed {
				return command.Reported(&fleet.ForbiddenError{Decision: *me.Decision})
			}
			return nil
		},
	}
	o.hub.BindRequired(cmd)
	o.out.Bind(cmd)
	f := cmd.Flags()
	f.StringVar(&o.ask.Action, "may", "", "also ask whether it may: author, promote, approve, override or tokens")
	f.StringArrayVar(&o.ask.Environments, "env", nil, "in this environment (repeatable)")
	f.StringArrayVar(&o.ask.Workspaces, "workspace", nil, "on this workspace's objects (repeatable)")
	f.StringArrayVar(&o.ask.Workloads, "workload", nil, "on this workload's workspace, as the hub knows it (repeatable)")
	f.BoolVar(&o.ask.Platform, "platform", false, "on the platform's objects (author)")
	return cmd
}

func whoAmIText(w io.Writer, me api.WhoAmI) error {
	id := me.Identity
	var b strings.Builder
	row := func(k, v string) {
		if v != "" {
			fmt.Fprintf(&b, "%-10s %s\n", k+":", v)
		}
	}
	row("who", id.String())
	row("name", id.Name)
	row("issuer", id.Issuer)
	row("subject", id.Subject)
	row("token", id.Token)
	if id.Admin {
		row("admin", "yes: may do everything")
	}
	row("groups", strings.Join(id.Groups, ", "))
	roles := strings.Join(me.Roles, ", ")
	if roles == "" {
		roles = "none (read only)"
	}
	row("roles", roles)
	if d := me.Decision; d != nil {
		verdict := "no"
		if d.Allowed {
			verdict = "yes"
		}
		row("may", verdict+": "+d.Reason)
	}
	_, err := io.WriteString(w, b.String())
	return err
}
