package cli

import (
	"context"
	"io"

	"github.com/spf13/cobra"

	"github.com/fleetform/fleetform/internal/cli/command"
	"github.com/fleetform/fleetform/internal/controlplane"
	"github.com/fleetform/fleetform/internal/gitops"
	"github.com/fleetform/fleetform/internal/pipeline"
)

type planOptions struct {
	cp  controlPlaneOptions
	out command.Output
	g   gitopsOptions
}

func newPlanCmd(e *env) *cobra.Command {
	var o planOptions
	cmd := &cobra.Command{
		Use: "plan",
		Example: "  fleetform plan --control-plane . --env dev\n" +
			"  # what would change in a local GitOps repository, with the diff of every file\n" +
			"  fleetform plan --env prod --gitops ../platform-gitops --diff\n" +
			"  # the blast radius of a change, as JSON for CI\n" +
			"  fleetform plan --env prod -o json",
		Short: "Show exactly what apply would change in the GitOps repository",
		Long: "plan renders the environment (only what changed since the branch was last written) and\n" +
			"compares it with the GitOps branch: files added, modified and removed, assignments gained\n" +
			"and lost, cluster types affected. Its text output is Markdown, sized for a pull-request\n" +
			"comment. Nothing is written.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := o.validate(); err != nil {
				return err
			}
			return o.run(cmd.Context(), e)
		},
	}
	o.cp.bind(cmd, e, true)
	o.out.Bind(cmd)
	o.g.bind(cmd)
	cmd.Flags().BoolVar(&o.g.diff, "diff", false, "show the unified diff of every changed file")
	return cmd
}

// loadForGitops loads the environment and resolves the GitOps target.
func loadForGitops(ctx context.Context, e *env, cp *controlPlaneOptions, g *gitopsOptions) (*pipeline.Run, gitops.Target, error) {
	cp.trusted = append(cp.trusted, g.repo) // --gitops, when given, names a host to trust
	ctl, err := cp.open(ctx, e)
	if err != nil {
		return nil, gitops.Target{}, err
	}
	return loadOpened(ctx, ctl, cp, g)
}

// loadOpened is loadForGitops on a control plane already opened.
func loadOpened(ctx context.Context, ctl *controlplane.ControlPlane, cp *controlPlaneOptions, g *gitopsOptions) (*pipeline.Run, gitops.Target, error) {
	envs, err := cp.environments(ctx, ctl, false)
	if err != nil {
		return nil, gitops.Target{}, err
	}
	r, err := runPipeline(ctx, ctl, envs[0], pipeline.UpToSchedule, renderDefaults())
	if err != nil {
		return nil, gitops.Target{}, err
	}
	if g.repo == "" {
		g.repo = ctl.GitOpsOverride(envs[0]) // the config file's GitOps repository of the environment
	}
	t, err := g.target(r)
	return r, t, err
}

func gitopsInput(r *pipeline.Run, t gitops.Target) gitops.Input {
	return gitops.Input{Snapshot: r.Snapshot, Schedule: r.Schedule, Target: t}
}

func (o *planOptions) validate() error {
	if err := o.out.Check(); err != nil {
		return err
	}
	return nil
}

func (o *planOptions) run(ctx context.Context, e *env) error {
	r, target, err := loadForGitops(ctx, e, &o.cp, &o.g)
	if err != nil {
		return err
	}
	creds, err := o.cp.credentials(e)
	if err != nil {
		return err
	}
	prog := newProgress(e, "rendering")
	p, err := writerFor(e, &o.g, creds, false, prog).Plan(ctx, gitopsInput(r, target))
	prog.finish()
	if err != nil {
		return failed(ExitFailed, err)
	}
	doc := pipeline.Report(p, r, o.g.diff)
	printDiagnostics(e.Stderr, r.DiagnosticsWith(p.Output))
	if err := o.out.Write(e.Stdout, doc, func(w io.Writer) error { return pipeline.WriteMarkdown(w, &doc, o.g.diff) }); err != nil {
		return failed(ExitFailed, err)
	}
	if len(doc.Errors) > 0 {
		return failed(ExitFailed, nil)
	}
	return nil
}
