package cli

import (
	"github.com/spf13/cobra"

	"github.com/fleetform/fleetform/internal/fleet"
)

type appPlanOptions struct {
	app    appOptions
	gitops string
}

func newAppPlanCmd(e *env) *cobra.Command {
	var o appPlanOptions
	cmd := &cobra.Command{
		Use:     "plan",
		Example: "  fleetform app plan --source . --config-repo ../hello-config --env dev --gitops ../hello-gitops.git --image-tag 1.4.3 -o json",
		Short:   "Show what app apply would change in the app GitOps repository, writing nothing",
		Long: "plan lists, per deployment target, the files app apply would add, modify or delete; targets\n" +
			"whose inputs did not change are not rendered.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := o.app.validate(true); err != nil {
				return err
			}
			cfg, err := o.app.fleet(e, o.gitops)
			if err != nil {
				return err
			}
			req := o.app.request()
			req.GitOps = o.gitops
			res, err := fleet.New(cfg).AppPlan(cmd.Context(), req)
			return o.app.printResult(e, "plan", res, err)
		},
	}
	o.app.bind(cmd)
	cmd.Flags().StringVar(&o.gitops, "gitops", "", "the app GitOps repository (path or URL; default: the targets' manifests.repo, through --repo-map)")
	return cmd
}
