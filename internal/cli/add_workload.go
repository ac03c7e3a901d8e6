package cli

import (
	"context"
	"errors"

	"github.com/spf13/cobra"

	"github.com/fleetform/fleetform/internal/authoring"
	"github.com/fleetform/fleetform/internal/cli/command"
)

// targetFlags are the flags of a deployment target.
type targetFlags struct {
	name   string // add workload --target
	labels []string
	repo   string
	branch string
	path   string
}

func (t *targetFlags) bind(cmd *cobra.Command, labelUsage string) {
	f := cmd.Flags()
	f.StringArrayVar(&t.labels, "label", nil, labelUsage)
	f.StringVar(&t.repo, "repo", "", "repository of the target's manifests")
	f.StringVar(&t.branch, "branch", "main", "branch of the target's manifests")
	f.StringVar(&t.path, "path", ".", "folder of the target's manifests")
}

// spec is the deployment target as written in its Workload.
func (t *targetFlags) spec(env string) map[string]any {
	return authoring.TargetSpec(env, t.repo, t.branch, t.path)
}

type addWorkloadOptions struct {
	a         authoringOptions
	workspace string
	labels    []string
	target    targetFlags
}

func newAddWorkloadCmd(e *env) *cobra.Command {
	var o addWorkloadOptions
	cmd := &cobra.Command{
		Use: "workload NAME [--target T --env E --repo URL]",
		Example: "  fleetform add workload shop --workspace retail --label tier=web\n" +
			"  # with its first deployment target\n" +
			"  fleetform add workload shop --workspace retail --target functional-test --env dev --repo https://github.com/org/shop-gitops --path ./dev",
		Short: "Add a workload to the common content (with its first deployment target)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.a.check(); err != nil {
				return err
			}
			return o.run(cmd.Context(), e, args[0])
		},
	}
	o.a.bind(cmd, e)
	f := cmd.Flags()
	f.StringVar(&o.workspace, "workspace", "", "the workload's workspace (team): its workspace label")
	f.StringArrayVar(&o.labels, "label", nil, "workload label KEY=VALUE (repeatable)")
	f.StringVar(&o.target.name, "target", "", "the first deployment target's name (with --env and --repo)")
	f.StringArrayVar(&o.target.labels, "target-label", nil, "the first deployment target's label KEY=VALUE (repeatable)")
	f.StringVar(&o.target.repo, "repo", "", "repository of the first target's manifests")
	f.StringVar(&o.target.branch, "branch", "main", "branch of the first target's manifests")
	f.StringVar(&o.target.path, "path", ".", "folder of the first target's manifests")
	return cmd
}

func (o *addWorkloadOptions) run(ctx context.Context, e *env, name string) error {
	labels, err := labelsFlag(o.labels)
	if err != nil {
		return err
	}
	targetLabels, err := labelsFlag(o.target.labels)
	if err != nil {
		return err
	}
	op, err := authoring.AddWorkload(name, o.workspace, labels, o.target.name, o.a.cp.env, o.target.repo, o.target.branch, o.target.path, targetLabels)
	if err != nil {
		return command.Usagef("%w: --target, --env and --repo", err)
	}
	return o.a.change(ctx, e, op)
}

type addTargetOptions struct {
	a      authoringOptions
	target targetFlags
}

func newAddTargetCmd(e *env) *cobra.Command {
	var o addTargetOptions
	cmd := &cobra.Command{
		Use: "target WORKLOAD TARGET --env E --repo URL",
		Example: "  fleetform add target shop uat --env stage --label purpose=uat --repo https://github.com/org/shop-gitops --path ./uat\n" +
			"  fleetform add target shop early-adopters --env prod --repo https://github.com/org/shop-gitops --branch release --dry-run",
		Short: "Add a deployment target to a workload",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.a.check(); err != nil {
				return err
			}
			if o.a.cp.env == "" || o.target.repo == "" {
				return command.Usage(errors.New("--env and --repo are required"))
			}
			return o.run(cmd.Context(), e, args[0], args[1])
		},
	}
	o.a.bind(cmd, e)
	o.target.bind(cmd, "deployment target label KEY=VALUE (repeatable)")
	return cmd
}

func (o *addTargetOptions) run(ctx context.Context, e *env, workload, name string) error {
	labels, err := labelsFlag(o.target.labels)
	if err != nil {
		return err
	}
	return o.a.change(ctx, e, authoring.Operation{Op: authoring.OpAdd, Kind: authoring.KindDeploymentTarget, Name: name,
		Workload: workload, Labels: labels, Spec: o.target.spec(o.a.cp.env)})
}
