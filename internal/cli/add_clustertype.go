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
		Use: "cluster-type NAME --env E [--env E2...]",
		Example: "  fleetform add cluster-type edge --env dev --label region=west --label size=small\n" +
			"  fleetform add cluster-type edge --env dev,stage,prod --label region=west\n" +
			"  fleetform add cluster-type plant-line --env prod --reconciler builtin/ansible --config-template builtin/env-file --commit",
		Short: "Add a cluster type to one or more environments",
		Long: "add cluster-type writes a ClusterType into each environment's cluster-types/ folder (one\n" +
			"change: one commit or pull request for all of them). Its\n" +
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
	o.a.cp.severalEnvs = true
	f := cmd.Flags()
	f.Lookup("env").Usage = "the environments the cluster type is added to (required; repeatable, or dev,stage)"
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
	if len(o.a.cp.envs) == 0 {
		o.a.cp.envs = []string{""} // authoring says the environment is required
	}
	ops := make([]authoring.Operation, 0, len(o.a.cp.envs))
	for _, env := range o.a.cp.envs {
		ops = append(ops, authoring.AddClusterType(name, env, labels, o.reconciler, o.namespace, o.config))
	}
	return o.a.change(ctx, e, ops...)
}
