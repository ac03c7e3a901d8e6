package cli

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/fleetform/fleetform/internal/authoring"
)

type addEnvironmentOptions struct {
	a           authoringOptions
	promoteFrom string
}

func newAddEnvironmentCmd(e *env) *cobra.Command {
	var o addEnvironmentOptions
	cmd := &cobra.Command{
		Use: "environment NAME",
		Example: "  fleetform add environment qa --promote-from dev\n" +
			"  fleetform add environment canary --promote-from stage --commit",
		Short: "Declare an environment (with its GitOpsRepo and an unpinned BaseRepo)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.a.check(); err != nil {
				return err
			}
			return o.run(cmd.Context(), e, args[0])
		},
	}
	o.a.bind(cmd, e)
	cmd.Flags().StringVar(&o.promoteFrom, "promote-from", "", "the environment this one receives promotions from")
	return cmd
}

func (o *addEnvironmentOptions) run(ctx context.Context, e *env, name string) error {
	return o.a.change(ctx, e, authoring.AddEnvironment(name, o.promoteFrom))
}
