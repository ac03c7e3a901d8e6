package cli

import (
	"context"
	"errors"

	"github.com/spf13/cobra"

	"github.com/fleetform/fleetform/internal/authoring"
	"github.com/fleetform/fleetform/internal/cli/command"
)

type addPolicyOptions struct {
	a            authoringOptions
	workspace    string
	targets      string
	clusterTypes string
}

func newAddPolicyCmd(e *env) *cobra.Command {
	var o addPolicyOptions
	cmd := &cobra.Command{
		Use: "policy NAME --env E --targets SELECTOR --cluster-types SELECTOR",
		Example: "  fleetform add policy web-on-edge --env dev --targets purpose=test --cluster-types \"region in (east,west),!legacy\"\n" +
			"  fleetform add policy retail --env prod --workspace retail --targets '' --cluster-types size=large --dry-run",
		Short: "Add a scheduling policy (selectors in kubectl's -l syntax)",
		Long: "add policy writes a SchedulingPolicy into the environment's scheduling/ folder. SELECTOR is\n" +
			"kubectl's -l syntax (k=v, k!=v, k in (a,b), k notin (a,b), k, !k), written as matchLabels and\n" +
			"matchExpressions. An empty selector ('') selects everything.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.a.check(); err != nil {
				return err
			}
			if !cmd.Flags().Changed("targets") || !cmd.Flags().Changed("cluster-types") {
				return command.Usage(errors.New("--targets and --cluster-types are required ('' selects everything)"))
			}
			return o.run(cmd.Context(), e, args[0])
		},
	}
	o.a.bind(cmd, e)
	f := cmd.Flags()
	f.StringVar(&o.workspace, "workspace", "", "select only the deployment targets of this workspace")
	f.StringVar(&o.targets, "targets", "", "deployment target selector (kubectl -l syntax)")
	f.StringVar(&o.clusterTypes, "cluster-types", "", "cluster type selector (kubectl -l syntax)")
	return cmd
}

func (o *addPolicyOptions) run(ctx context.Context, e *env, name string) error {
	op, err := authoring.AddPolicy(name, o.a.cp.env, o.workspace, o.targets, o.clusterTypes)
	var se *authoring.SelectorError
	if errors.As(err, &se) {
		flag := map[string]string{authoring.SelectsTargets: "--targets", authoring.SelectsClusterTypes: "--cluster-types"}[se.Of]
		return command.Usagef("%s: %w", flag, se.Err)
	}
	if err != nil {
		return command.Usage(err)
	}
	return o.a.change(ctx, e, op)
}
