package cli

import (
	"errors"

	"github.com/spf13/cobra"

	"github.com/fleetform/fleetform/internal/authoring"
	"github.com/fleetform/fleetform/internal/cli/command"
)

type addRegistrationOptions struct {
	a         authoringOptions
	repo      string
	branch    string
	path      string
	workspace string
}

func newAddRegistrationCmd(e *env) *cobra.Command {
	var o addRegistrationOptions
	cmd := &cobra.Command{
		Use: "registration NAME --repo URL --workspace WS",
		Example: "  fleetform add registration payments --repo https://github.com/org/payments-workloads --path ./workloads --workspace payments-team\n" +
			"  fleetform add registration shop --repo https://github.com/org/shop --workspace retail --pr",
		Short: "Register an application repository's workloads (a WorkloadRegistration)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.a.check(); err != nil {
				return err
			}
			if o.repo == "" || o.workspace == "" {
				return command.Usage(errors.New("--repo and --workspace are required"))
			}
			return o.a.change(cmd.Context(), e, o.operation(args[0]))
		},
	}
	o.a.bind(cmd, e)
	f := cmd.Flags()
	f.StringVar(&o.repo, "repo", "", "the application repository holding the workloads")
	f.StringVar(&o.branch, "branch", "main", "its branch")
	f.StringVar(&o.path, "path", ".", "the folder of its workloads")
	f.StringVar(&o.workspace, "workspace", "", "the workspace (team) its deployment targets get")
	return cmd
}

func (o *addRegistrationOptions) operation(name string) authoring.Operation {
	return authoring.AddRegistration(name, o.repo, o.branch, o.path, o.workspace)
}
