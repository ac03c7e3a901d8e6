package cli

import (
	"context"
	"errors"
	"strings"

	"github.com/spf13/cobra"

	"github.com/fleetform/fleetform/internal/authoring"
	"github.com/fleetform/fleetform/internal/cli/command"
)

// scopeFlags choose the precedence level of config values.
type scopeFlags struct {
	clusterType, workload, target, selector string
	environmentWide                         bool
}

func (s *scopeFlags) bind(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringVar(&s.clusterType, "cluster-type", "", "the cluster type's level")
	f.StringVar(&s.workload, "workload", "", "the workload's level")
	f.StringVar(&s.target, "deployment-target", "", "the deployment target's level (<workload>-<target>)")
	f.StringVar(&s.selector, "selector", "", "the label-matched level: KEY=VALUE[,KEY=VALUE]")
	f.BoolVar(&s.environmentWide, "environment-wide", false, "the environment-wide level (the lowest)")
}

func (s *scopeFlags) scope() (*authoring.ConfigScope, error) {
	sc := &authoring.ConfigScope{ClusterType: s.clusterType, Workload: s.workload, DeploymentTarget: s.target,
		Selector: s.selector, EnvironmentWide: s.environmentWide}
	n := 0
	for _, v := range []bool{s.clusterType != "", s.workload != "", s.target != "", s.selector != "", s.environmentWide} {
		if v {
			n++
		}
	}
	if n != 1 {
		return nil, command.Usage(errors.New("give exactly one of --cluster-type, --workload, --deployment-target, --selector or --environment-wide"))
	}
	return sc, nil
}

type setConfigOptions struct {
	a     authoringOptions
	scope scopeFlags
}

func newSetCmd(e *env) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "set",
		Example: "  fleetform set config REPLICAS=3 --env dev --cluster-type large",
		Short:   "Set platform config values",
	}
	cmd.AddCommand(newSetConfigCmd(e))
	return cmd
}

func newSetConfigCmd(e *env) *cobra.Command {
	var o setConfigOptions
	cmd := &cobra.Command{
		Use: "config KEY=VALUE... --env E (--cluster-type CT | --workload W | --deployment-target DT | --selector SELECTOR | --environment-wide)",
		Example: "  fleetform set config REPLICAS=3 LOG_LEVEL=info --env dev --cluster-type large\n" +
			"  fleetform set config REGION=westeurope --env prod --selector region=westeurope\n" +
			"  fleetform set config 'CURRENCIES=[EUR, USD]' --env dev --workload ledger --commit",
		Short: "Set config values in the platform-config ConfigMap of a precedence level",
		Long: "set config writes the values into the platform-config ConfigMap of the level (creating one\n" +
			"with the right labels when there is none). A value given as YAML or JSON text of a list or a\n" +
			"map stays structured (written as YAML text, which compose reads as structured).",
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.a.check(); err != nil {
				return err
			}
			return o.run(cmd.Context(), e, args)
		},
	}
	o.a.bind(cmd, e)
	o.scope.bind(cmd)
	return cmd
}

func (o *setConfigOptions) run(ctx context.Context, e *env, args []string) error {
	return o.changeConfig(ctx, e, func(op *authoring.Operation) error {
		op.Op, op.Data = authoring.OpSet, map[string]any{}
		for _, a := range args {
			k, v, ok := strings.Cut(a, "=")
			if !ok || k == "" {
				return command.Usagef("%q: want KEY=VALUE", a)
			}
			op.Data[k] = v
		}
		return nil
	})
}

// changeConfig checks the level the flags choose and --env, then has fill say what the
// change is (set config or unset config) and makes it on the platform-config ConfigMap of
// that level in that environment.
func (o *setConfigOptions) changeConfig(ctx context.Context, e *env, fill func(*authoring.Operation) error) error {
	scope, err := o.scope.scope()
	if err != nil {
		return err
	}
	if o.a.cp.env == "" {
		return command.Usage(errors.New("--env is required"))
	}
	op := authoring.ChangeConfig(o.a.cp.env, scope)
	if err := fill(&op); err != nil {
		return err
	}
	return o.a.change(ctx, e, op)
}
