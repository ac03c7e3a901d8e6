package cli

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/fleetform/fleetform/internal/authoring"
)

type addClusterTypeOptions struct {
	a          authoringOptions
	labels     []string
	reconciler string
	namespace  string
	config     string
}

func newAddClusterTypeCmd(e *env) *cobra.Command {
	var o addClusterTypeOptions
	cmd := &cobra.Command{
		Use: "cluster-type NAME --env E",
		Example: "  fleetform add cluster-type edge --env dev --label region=west --label size=small\n" +
			"  fleetform add cluster-type plant-line --env prod --reconciler builtin/ansible --config-template builtin/env-file --commit",
		Short: "Add a cluster type to an environment",
		Long: "add cluster-type writes a ClusterType into the environment's cluster-types/ folder. Its\n" +
			"templates default to the environment's (fleetform.io/default-* annotations, written by init),\n" +
			"else builtin/flux, builtin/namespace and builtin/configmap.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.a.check(); err != nil {
				return err
			}
			return o.run(cmd.Context(), e, args[0])
		},
	}
	o.a.bind(cmd, e)
	f := cmd.Flags()
	f.StringArrayVar(&o.labels, "label", nil, "label KEY=VALUE (repeatable)")
	f.StringVar(&o.reconciler, "reconciler", "", "reconciler template (default: the environment's, else builtin/flux)")
	f.StringVar(&o.namespace, "namespace-template", "", "namespace template (default: the environment's, else builtin/namespace)")
	f.StringVar(&o.config, "config-template", "", "config template (default: the environment's, else builtin/configmap)")
	return cmd
}

func (o *addClusterTypeOptions) run(ctx context.Context, e *env, name string) error {
	labels, err := labelsFlag(o.labels)
	if err != nil {
		return err
	}
	return o.a.change(ctx, e, authoring.AddClusterType(name, o.a.cp.env, labels, o.reconciler, o.namespace, o.config))
}
