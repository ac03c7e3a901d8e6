package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/fleetform/fleetform/internal/app"
	"github.com/fleetform/fleetform/internal/cli/command"
	"github.com/fleetform/fleetform/internal/fleet"
)

func newAppCmd(e *env) *cobra.Command {
	cmd := &cobra.Command{
		Use: "app",
		Example: "  fleetform app render --source . --config-repo ../hello-config --env dev --out ../hello-gitops --version 1.4.2\n" +
			"  fleetform app apply --source . --config-repo ../hello-config --env dev --gitops ../hello-gitops.git --image-tag 1.4.2\n" +
			"  fleetform app explain --source . --config-repo ../hello-config --target performance-test logging.level\n" +
			"  fleetform app promote --source . --config-repo ../hello-config --gitops ../hello-gitops.git --from dev --to stage --hub http://hub:8080",
		Short: "The application team's flow: compose values per deployment target, render the chart, write the app GitOps repository",
		Long: "An application lives in three repositories: source (workload.yaml, a Helm chart or a kustomize\n" +
			"base, an optional values schema and fleetform-app.yaml), config (values.yaml files per\n" +
			"environment and deployment target, a branch per environment as Kalypso has it, or a folder\n" +
			"per environment) and GitOps (the rendered manifests each target's reconciler pulls, at the\n" +
			"manifests.repo/branch/path its workload.yaml names). See docs/apps.md.",
	}
	cmd.AddCommand(newAppRenderCmd(e), newAppPlanCmd(e), newAppApplyCmd(e), newAppExplainCmd(e), newAppPromoteCmd(e))
	return cmd
}

// appOptions are the flags every app command takes: the source and config repositories,
// the environment, the variables and CI values.
type appOptions struct {
	cp         controlPlaneOptions // its config file, repo map and credentials only
	out        command.Output
	source     string
	sourceRef  string
	configRepo string
	configRef  string
	env        string
	vars       []string
	set        []string
	version    string
	imageTag   string
	regenerate bool

	varMap map[string]string // set by validate
}

func (o *appOptions) bind(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringVar(&o.source, "source", ".", "the application's source repository: a directory, a git repository (path) or a git URL")
	f.StringVar(&o.sourceRef, "source-ref", "", "ref (branch, tag or commit) of the source repository to read (default HEAD)")
	f.StringVar(&o.configRepo, "config-repo", "", "the application's config repository: a directory, a git repository (path) or a git URL")
	f.StringVar(&o.configRef, "config-ref", "", "read the config repository's folder layout at this ref (default: the environment's branch if there is one, else HEAD)")
	f.StringVar(&o.env, "env", "", "environment")
	f.StringArrayVar(&o.vars, "var", nil, "a variable substituted in values files ($NAME, ${NAME}): NAME=VALUE (repeatable)")
	f.StringArrayVar(&o.set, "set", nil, "a value over every values file, as helm --set: key.path=value (repeatable)")
	f.StringVar(&o.version, "version", "", "the application's version (also the variable VERSION)")
	f.StringVar(&o.imageTag, "image-tag", "", "the image tag (also the variable IMAGE_TAG)")
	f.BoolVar(&o.regenerate, "regenerate", false, "write new values of the chart's random functions (passwords, certificates, names) instead of keeping those the targets' folders hold")
	f.StringArrayVar(&o.cp.repoMap, "repo-map", nil, "map a repository URL to a local path or git repository: URL=PATH (repeatable)")
	f.StringVar(&o.cp.configFile, "config", os.Getenv("FLEETFORM_CONFIG"),
		"config file (repoMap, credentials); default $FLEETFORM_CONFIG, else fleetform.yaml or .fleetform.yaml in the working directory or a parent")
	o.out.Bind(cmd)
}

// validate checks the flags every app command shares.
func (o *appOptions) validate(needEnv bool) error {
	if err := o.out.Check(); err != nil {
		return err
	}
	if o.configRepo == "" {
		return command.Usage(errors.New("--config-repo is required"))
	}
	if needEnv && o.env == "" {
		return command.Usage(errors.New("--env is required"))
	}
	o.varMap = map[string]string{}
	for _, v := range o.vars {
		name, value, ok := strings.Cut(v, "=")
		if !ok || name == "" {
			return command.Usagef("--var %q: want NAME=VALUE", v)
		}
		o.varMap[name] = value
	}
	return nil
}

// request is the app flow's request from the flags.
func (o *appOptions) request() fleet.AppRequest {
	return fleet.AppRequest{Source: o.source, SourceRef: o.sourceRef, ConfigRepo: o.configRepo, ConfigRef: o.configRef,
		Env: o.env, Vars: o.varMap, Set: o.set, Version: o.version, ImageTag: o.imageTag, Regenerate: o.regenerate}
}

// fleet builds the application layer of an app command; more are the repositories it names
// besides the source and the config repository (trusted as the command line's).
func (o *appOptions) fleet(e *env, more ...string) (fleet.Config, error) {
	o.cp.trusted = append(o.cp.trusted, o.source, o.configRepo)
	o.cp.trusted = append(o.cp.trusted, more...)
	return o.cp.config(e)
}

// printResult prints a render, plan or apply result and chooses the exit code: 1 when a
// target failed or a folder mismatched (the others were written all the same).
func (o *appOptions) printResult(e *env, verb string, res *app.Result, err error) error {
	if res == nil {
		return err
	}
	printed := map[string]bool{}
	for _, m := range res.Mismatches {
		fmt.Fprintln(e.Stderr, "error:", m.Message)
		printed[m.Message] = true
	}
	for _, t := range res.Targets {
		if t.Status == app.StatusFailed && !printed[t.Error] {
			fmt.Fprintln(e.Stderr, "error:", t.Error)
		}
	}
	if werr := o.out.Write(e.Stdout, res, func(w io.Writer) error { return appText(w, verb, res) }); werr != nil {
		return werr
	}
	return command.Reported(err)
}
