package cli

import (
	"context"
	"io"

	"github.com/spf13/cobra"

	"github.com/fleetform/fleetform/internal/cli/command"
	"github.com/fleetform/fleetform/internal/fleet"
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

func (o *planOptions) validate() error { return o.out.Check() }

func (o *planOptions) run(ctx context.Context, e *env) error {
	o.cp.trusted = append(o.cp.trusted, o.g.repo) // --gitops, when given, names a host to trust
	f, err := o.cp.fleet(e)
	if err != nil {
		return err
	}
	prog := newProgress(e, "rendering")
	doc, err := f.Plan(ctx, fleet.PlanRequest{Env: o.cp.env, GitOps: o.g.repo, Branch: o.g.branch, Path: o.g.path, Write: o.g.write(prog)})
	prog.finish()
	if doc == nil {
		return err
	}
	printDiagnostics(e.Stderr, doc.Diagnostics)
	werr := o.out.Write(e.Stdout, doc, func(w io.Writer) error { return pipeline.WriteMarkdown(w, &doc.PlanReport, o.g.diff) })
	if werr != nil {
		return werr
	}
	return command.Reported(err)
}
