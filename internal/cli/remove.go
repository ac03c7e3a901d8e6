package cli

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/fleetform/fleetform/api/v1alpha1"
	"github.com/fleetform/fleetform/internal/authoring"
)

type removeOptions struct {
	a        authoringOptions
	workload string
}

// removeKinds maps the command line's kind names to the model's kinds.
var removeKinds = map[string]string{
	"environment": v1alpha1.KindEnvironment, "cluster-type": v1alpha1.KindClusterType, "workload": v1alpha1.KindWorkload,
	"target": authoring.KindDeploymentTarget, "policy": v1alpha1.KindSchedulingPolicy,
	"registration": v1alpha1.KindWorkloadRegistration, "config-map": v1alpha1.KindConfigMap,
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

func kindOf(s string) (string, error) {
	if k, ok := removeKinds[strings.ToLower(s)]; ok {
		return k, nil
	}
	for _, k := range removeKinds {
		if strings.EqualFold(k, s) {
			return k, nil
		}
	}
	return "", failed(ExitUsage, fmt.Errorf("kind %q: want environment, cluster-type, workload, target, policy, registration or config-map", s))
}

func (o *removeOptions) run(ctx context.Context, e *env, kindArg, name string) error {
	kind, err := kindOf(kindArg)
	if err != nil {
		return err
	}
	op := authoring.Operation{Op: authoring.OpRemove, Kind: kind, Name: name, Env: o.a.cp.env}
	if kind == authoring.KindDeploymentTarget {
		op.Env, op.Workload = "", o.workload
	}
	return o.a.change(ctx, e, op)
}
