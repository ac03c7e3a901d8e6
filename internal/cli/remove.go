package cli

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/fleetform/fleetform/internal/authoring"
	"github.com/fleetform/fleetform/internal/cli/command"
)

type removeOptions struct {
	a        authoringOptions
	workload string
}

func newRemoveCmd(e *env) *cobra.Command {
	var o removeOptions
	cmd := &cobra.Command{
		Use: "remove KIND NAME [--env E]",
		Example: "  fleetform remove cluster-type edge --env dev\n" +
			"  fleetform remove target shop-uat\n" +
			"  fleetform remove target uat --workload shop\n" +
			"  fleetform remove registration payments --commit",
		Short: "Remove an environment, cluster type, workload, deployment target, policy, registration or config map",
		Long: "remove deletes the object's document (and the file when nothing else is left in it), after\n" +
			"validating the control plane without it and showing what that does to the fleet. KIND is\n" +
			"environment, cluster-type, workload, target, policy, registration or config-map (the model's\n" +
			"kind names work too). A target is named <workload>-<target>, or TARGET with --workload.",
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.a.check(); err != nil {
				return err
			}
			return o.run(cmd.Context(), e, args[0], args[1])
		},
	}
	o.a.bind(cmd, e)
	cmd.Flags().StringVar(&o.workload, "workload", "", "the workload of a target")
	return cmd
}

func (o *removeOptions) run(ctx context.Context, e *env, kindArg, name string) error {
	kind, err := authoring.ParseKind(kindArg)
	if err != nil {
		return command.Usage(err)
	}
	return o.a.change(ctx, e, authoring.Remove(kind, name, o.a.cp.env, o.workload))
}
