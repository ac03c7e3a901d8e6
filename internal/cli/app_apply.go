package cli

import (
	"context"
	"os"

	"github.com/spf13/cobra"

	"github.com/fleetform/fleetform/internal/cli/command"
	"github.com/fleetform/fleetform/internal/fleet"
)

type appApplyOptions struct {
	app      appOptions
	gitops   string
	pr       bool
	forgeURL string
	author   string
	hub      hubOptions
	sig      fleet.Author // set by validate
}

func newAppApplyCmd(e *env) *cobra.Command {
	var o appApplyOptions
	cmd := &cobra.Command{
		Use: "apply",
		Example: "  fleetform app apply --source . --config-repo ../hello-config --env dev --gitops ../hello-gitops.git --var IMAGE_NAME=ghcr.io/org/hello-world --image-tag 1.4.2 --version 1.4.2\n" +
			"  # open (or update) a pull request per branch, and post the versions to the hub\n" +
			"  fleetform app apply --source . --config-repo https://github.com/org/hello-config --env dev --pr --hub https://hub.example.com",
		Short: "Write what changed for an environment's deployment targets to the app GitOps repository",
		Long: "apply renders only the targets whose inputs changed (the digest of the chart, the composed\n" +
			"values and the version is kept in each target's .github/tracking/Inputs_Digest) and writes\n" +
			"them as one commit per branch, naming the version and the targets; nothing changed, no\n" +
			"commit. With --pr the commit goes to fleetform/<env>/app/<workload>/<source commit>/<branch>\n" +
			"and a pull request is opened, or the open one updated. With --hub, the version of every\n" +
			"target is posted to the hub (POST /api/v1/versions; token from " + command.HubTokenEnv + ").",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := o.validate(); err != nil {
				return err
			}
			return o.run(cmd.Context(), e)
		},
	}
	o.app.bind(cmd)
	o.hub.Bind(cmd)
	f := cmd.Flags()
	f.StringVar(&o.gitops, "gitops", "", "the app GitOps repository (path or URL; default: the targets' manifests.repo, through --repo-map)")
	f.BoolVar(&o.pr, "pr", false, "push to a head branch and open (or update) a pull request (GitHub; token from FLEETFORM_GITHUB_TOKEN or GITHUB_TOKEN)")
	f.StringVar(&o.forgeURL, "forge-url", "", "API base URL of the forge (GitHub Enterprise: https://HOST/api/v3/); default from the repository URL")
	f.StringVar(&o.author, "author", "fleetform <fleetform@localhost>", "commit author, as \"Name <email>\"")
	return cmd
}

func (o *appApplyOptions) validate() error {
	if err := o.app.validate(true); err != nil {
		return err
	}
	var err error
	if o.sig, err = author(o.author); err != nil {
		return err
	}
	if o.hub.URL != "" && os.Getenv(command.HubTokenEnv) == "" {
		return command.Usagef("--hub: set %s to a hub token", command.HubTokenEnv)
	}
	return nil
}

// fleet builds the application layer of an app command that writes.
func (o *appApplyOptions) fleet(e *env) (*fleet.Fleet, error) {
	cfg, err := o.app.fleet(e, o.gitops, o.forgeURL)
	if err != nil {
		return nil, err
	}
	cfg.Author, cfg.ForgeURL = o.sig, o.forgeURL
	if cfg.Hub, err = o.hub.hub(); err != nil {
		return nil, err
	}
	return fleet.New(cfg), nil
}

// request is the app flow's request from the flags.
func (o *appApplyOptions) request() fleet.AppRequest {
	req := o.app.request()
	req.GitOps, req.PullRequest = o.gitops, o.pr
	return req
}

func (o *appApplyOptions) run(ctx context.Context, e *env) error {
	f, err := o.fleet(e)
	if err != nil {
		return err
	}
	res, err := f.AppApply(ctx, o.request())
	return o.app.printResult(e, "apply", res, err)
}
