package cli

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/fleetform/fleetform/internal/cli/command"
	"github.com/fleetform/fleetform/internal/hub/api"
)

type approveOptions struct {
	hub         hubOptions
	out         command.Output
	environment string
	commit      string
	by          string
}

func newApproveCmd(e *env) *cobra.Command {
	var o approveOptions
	cmd := &cobra.Command{
		Use:     "approve",
		Example: "  FLEETFORM_HUB_TOKEN=... fleetform approve --hub https://hub.example.com --env prod --commit 1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d7e8f9a0b --by alice",
		Short:   "Approve a control-plane commit for promotion into an environment",
		Long: "approve records on the hub that --commit may be promoted into --env (for environments whose\n" +
			"promotion requires an approval), with who approved and when. Needs the admin token.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := o.out.Check(); err != nil {
				return err
			}
			if o.by == "" {
				return command.Usagef("--by is required (default $FLEETFORM_ACTOR, $GITHUB_ACTOR or $USER)")
			}
			if !fullSHA.MatchString(o.commit) {
				return command.Usagef("--commit %q: give the full 40-character commit SHA (git rev-parse %s): an approval is for one exact commit", o.commit, o.commit)
			}
			c, err := o.hub.Client()
			if err != nil {
				return err
			}
			if err := c.Approve(cmd.Context(), o.environment, o.commit, o.by); err != nil {
				return err
			}
			doc := api.Approval{Environment: o.environment, Commit: o.commit, By: o.by}
			return writeOut(e, o.out, doc, func(w io.Writer) error {
				_, err := fmt.Fprintf(w, "approved %s for %s by %s\n", shortSHA(o.commit), o.environment, o.by)
				return err
			})
		},
	}
	o.hub.BindRequired(cmd)
	o.out.Bind(cmd)
	f := cmd.Flags()
	f.StringVar(&o.environment, "env", "", "environment the commit may be promoted into (required)")
	f.StringVar(&o.commit, "commit", "", "control-plane commit (required)")
	f.StringVar(&o.by, "by", defaultActor(), "who approves; default $FLEETFORM_ACTOR, $GITHUB_ACTOR or $USER")
	_ = cmd.MarkFlagRequired("env")
	_ = cmd.MarkFlagRequired("commit")
	return cmd
}
