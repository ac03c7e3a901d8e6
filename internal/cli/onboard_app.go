package cli

import (
	"context"
	"errors"
	"strings"

	"github.com/spf13/cobra"

	"github.com/fleetform/fleetform/internal/cli/command"
	"github.com/fleetform/fleetform/internal/fleet"
)

type onboardAppOptions struct {
	a         authoringOptions
	repo      string
	workspace string
	branch    string
	appDir    string
	targets   []string
}

func newOnboardAppCmd(e *env) *cobra.Command {
	var o onboardAppOptions
	cmd := &cobra.Command{
		Use: "app NAME --repo URL --workspace WS [--app-dir DIR] [--target TARGET=ENV]...",
		Example: "  fleetform onboard app shop --repo https://github.com/org/shop --workspace retail --app-dir ../shop --target functional-test=dev --target uat=stage\n" +
			"  fleetform onboard app shop --repo https://github.com/org/shop --workspace retail --commit",
		Short: "Register an application repository and write its starting workload.yaml",
		Long: "onboard app adds the WorkloadRegistration of the application's repository to the control plane\n" +
			"(validated and planned like add: written, committed or proposed as a pull request) and writes\n" +
			"a starting workload/workload.yaml with the given deployment targets into --app-dir, the\n" +
			"application repository's work tree. The new workload is validated from there (--repo is read\n" +
			"from --app-dir), so the plan shows where its targets land. A workload/workload.yaml already\n" +
			"there is never replaced: it is kept as it is and is the workload validated and planned.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.a.check(); err != nil {
				return err
			}
			if o.repo == "" || o.workspace == "" {
				return command.Usage(errors.New("--repo and --workspace are required"))
			}
			return o.run(cmd.Context(), e, args[0])
		},
	}
	o.a.bind(cmd, e)
	f := cmd.Flags()
	f.StringVar(&o.repo, "repo", "", "the application's repository")
	f.StringVar(&o.workspace, "workspace", "", "the application team's workspace")
	f.StringVar(&o.branch, "branch", "main", "the branch the workloads are read from")
	f.StringVar(&o.appDir, "app-dir", "", "the application repository's work tree, where workload/workload.yaml is written (an existing one is kept)")
	f.StringArrayVar(&o.targets, "target", nil, "a deployment target TARGET=ENV (repeatable)")
	return cmd
}

// targetsFlag parses --target TARGET=ENV flags.
func (o *onboardAppOptions) targetsFlag() ([]fleet.AppTarget, error) {
	var out []fleet.AppTarget
	for _, t := range o.targets {
		target, env, ok := strings.Cut(t, "=")
		if !ok || target == "" || env == "" {
			return nil, command.Usagef("--target %q: want TARGET=ENV", t)
		}
		out = append(out, fleet.AppTarget{Name: target, Environment: env})
	}
	return out, nil
}

func (o *onboardAppOptions) run(ctx context.Context, e *env, name string) error {
	targets, err := o.targetsFlag()
	if err != nil {
		return err
	}
	f, err := o.a.fleet(e)
	if err != nil {
		return err
	}
	res, err := f.OnboardApp(ctx, fleet.OnboardAppRequest{Name: name, Repo: o.repo, Workspace: o.workspace, Branch: o.branch,
		Targets: targets, AppDir: o.appDir, Mode: o.a.mode(), Message: o.a.message})
	return o.a.report(e, res, err)
}
