package cli

import (
	"errors"

	"github.com/spf13/cobra"

	"github.com/fleetform/fleetform/internal/cli/command"
	"github.com/fleetform/fleetform/internal/fleet"
)

type appRenderOptions struct {
	app appOptions
	dir string
}

func newAppRenderCmd(e *env) *cobra.Command {
	var o appRenderOptions
	cmd := &cobra.Command{
		Use: "render",
		Example: "  # Kalypso's sample: the dev targets, rendered into ./gitops/<manifests.path>\n" +
			"  fleetform app render --source ./app-src --config-repo ./app-config --env dev --out ./gitops --var IMAGE_NAME=ghcr.io/org/hello-world --image-tag 1.4.2 --version 1.4.2",
		Short: "Render the deployment targets of an environment into a directory",
		Long: "render composes each deployment target's values (the chart's values.yaml < each values.yaml from\n" +
			"the config repository's root down to the target's folder < --set), checks them against the\n" +
			"schema, renders the chart and writes the target's files into DIR/<manifests.path>: one file\n" +
			"per object, a kustomization.yaml listing them and .github/tracking/. fleetform owns each\n" +
			"target's folder (stale files are removed); nothing else in DIR is touched.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := o.validate(); err != nil {
				return err
			}
			cfg, err := o.app.fleet(e)
			if err != nil {
				return err
			}
			res, err := fleet.New(cfg).AppRender(cmd.Context(), o.app.request(), o.dir)
			return o.app.printResult(e, "render", res, err)
		},
	}
	o.app.bind(cmd)
	cmd.Flags().StringVar(&o.dir, "out", "", "the root of the app GitOps repository to write into (a directory)")
	return cmd
}

func (o *appRenderOptions) validate() error {
	if err := o.app.validate(true); err != nil {
		return err
	}
	if o.dir == "" {
		return command.Usage(errors.New("--out DIR is required"))
	}
	return nil
}
