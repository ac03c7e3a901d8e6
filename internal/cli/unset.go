package cli

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/fleetform/fleetform/internal/authoring"
)

func newUnsetCmd(e *env) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "unset",
		Example: "  fleetform unset config REPLICAS --env dev --cluster-type large",
		Short:   "Remove platform config values",
	}
	cmd.AddCommand(newUnsetConfigCmd(e))
	return cmd
}

func newUnsetConfigCmd(e *env) *cobra.Command {
	var o setConfigOptions
	cmd := &cobra.Command{
		Use: "config KEY... --env E (--cluster-type CT | --workload W | --deployment-target DT | --selector SELECTOR | --environment-wide)",
		Example: "  fleetform unset config REPLICAS --env dev --cluster-type large\n" +
			"  fleetform unset config REGION DATABASE_HOST --env prod --selector region=westeurope --dry-run",
		Short: "Remove config values from the platform-config ConfigMap of a precedence level",
		Long:  "unset config removes the keys from the level's ConfigMap; a ConfigMap left empty is removed.",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.a.check(); err != nil {
				return err
			}
			return o.unset(cmd.Context(), e, args)
		},
	}
	o.a.bind(cmd, e)
	o.scope.bind(cmd)
	return cmd
}

func (o *setConfigOptions) unset(ctx context.Context, e *env, keys []string) error {
	return o.changeConfig(ctx, e, func(op *authoring.Operation) error {
		op.Op, op.Keys = authoring.OpUnset, keys
		return nil
	})
}
