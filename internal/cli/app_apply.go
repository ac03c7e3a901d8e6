package cli

import (
	"context"
	"errors"
	"fmt"
	"net/mail"
	"os"
	"time"

	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/spf13/cobra"

	"github.com/fleetform/fleetform/internal/app"
	"github.com/fleetform/fleetform/internal/cli/command"
	"github.com/fleetform/fleetform/internal/gitops/gitrepo"
	"github.com/fleetform/fleetform/internal/hub"
	"github.com/fleetform/fleetform/internal/pipeline"
)

type appApplyOptions struct {
	app      appOptions
	gitops   string
	pr       bool
	forgeURL string
	author   string
	hub      hubOptions
	sig      object.Signature // set by validate
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
	addr, err := mail.ParseAddress(o.author)
	if err != nil {
		return failed(ExitUsage, fmt.Errorf("--author %q: want \"Name <email>\"", o.author))
	}
	o.sig = object.Signature{Name: addr.Name, Email: addr.Address}
	if o.hub.URL != "" && os.Getenv(command.HubTokenEnv) == "" {
		return failed(ExitUsage, fmt.Errorf("--hub: set %s to a hub token", command.HubTokenEnv))
	}
	return nil
}

func (o *appApplyOptions) run(ctx context.Context, e *env) error {
	r, err := o.app.load(ctx, e, o.app.env)
	if err != nil {
		return err
	}
	res, err := applyRun(ctx, e, &o.app, r, o.gitops, o.pr, o.forgeURL, o.sig, false)
	if err != nil {
		return err
	}
	if o.hub.URL != "" {
		if err := postVersions(ctx, &o.hub, r, res); err != nil {
			return failed(ExitFailed, err)
		}
	}
	return o.app.printResult(e, "apply", res)
}

// applyRun writes (or, dry, plans) a run into the app GitOps repository.
func applyRun(ctx context.Context, e *env, o *appOptions, r *app.Run, gitops string, pr bool, forgeURL string, sig object.Signature, dry bool) (*app.Result, error) {
	location, err := gitopsLocation(o, e, r, gitops)
	if err != nil {
		return nil, err
	}
	o.cp.trusted = append(o.cp.trusted, location, forgeURL)
	creds, err := o.cp.credentials(e)
	if err != nil {
		return nil, err
	}
	repo, err := gitrepo.Open(ctx, location, os.Getenv("FLEETFORM_CACHE_DIR"), creds, e.Logger)
	if err != nil {
		return nil, failed(ExitFailed, err)
	}
	w := &app.Writer{Repo: repo, Author: sig, Logger: e.Logger}
	if pr {
		frepo, client, err := pipeline.ForgeClient(ctx, creds, gitopsURL(r, gitops), forgeURL)
		if err != nil {
			return nil, failed(ExitUsage, err)
		}
		w.PullRequests = &app.PullRequests{Forge: client, Repo: frepo}
	}
	var res *app.Result
	if dry {
		res, err = w.Plan(ctx, r)
	} else {
		res, err = w.Apply(ctx, r)
	}
	if err != nil {
		return nil, failed(ExitFailed, err)
	}
	return res, nil
}

// gitopsURL is the URL of the app GitOps repository: --gitops, else the targets' repo.
func gitopsURL(r *app.Run, gitops string) string {
	if gitops != "" {
		return gitops
	}
	return r.Targets[0].Target.Repo
}

// gitopsLocation is where the app GitOps repository is read and written: --gitops, else
// the one repository every target names (through the repo map).
func gitopsLocation(o *appOptions, e *env, r *app.Run, gitops string) (string, error) {
	if gitops != "" {
		return gitops, nil
	}
	repo := r.Targets[0].Target.Repo
	for _, t := range r.Targets {
		if t.Target.Repo != repo {
			return "", failed(ExitUsage, fmt.Errorf("the targets of %s name several repositories (%s, %s): give --gitops", r.Env, repo, t.Target.Repo))
		}
	}
	if repo == "" {
		return "", failed(ExitUsage, errors.New("the targets name no manifests.repo: give --gitops"))
	}
	opts, err := o.cp.platformOptions(e)
	if err != nil {
		return "", err
	}
	if p, ok := opts.RepoMap.Lookup(repo); ok {
		return p, nil
	}
	return repo, nil
}

// postVersions posts the version of every target that did not fail to the hub.
func postVersions(ctx context.Context, h *hubOptions, r *app.Run, res *app.Result) error {
	c, err := h.Client()
	if err != nil {
		return err
	}
	for _, t := range res.Targets {
		if t.Status == app.StatusFailed {
			continue
		}
		v := hub.WorkloadVersion{Environment: r.Env, Workload: res.Workload,
			DeploymentTarget: res.Workload + "-" + t.Target, Version: res.Version, Build: res.ImageTag,
			SourceCommit: res.SourceCommit, ReportedAt: time.Now().UTC()}
		if v.Version == "" {
			v.Version = res.SourceCommit
		}
		if err := c.PostWorkloadVersion(ctx, v); err != nil {
			return fmt.Errorf("post the version of %s to the hub: %w", t.Target, err)
		}
	}
	return nil
}
