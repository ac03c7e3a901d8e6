package cli

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/fleetform/fleetform/internal/cli/command"
	"github.com/fleetform/fleetform/internal/fleet"
	"github.com/fleetform/fleetform/internal/pipeline"
)

type applyOptions struct {
	cp              controlPlaneOptions
	out             command.Output
	g               gitopsOptions
	allowMassDelete bool
	author          string
	subject         string
	maxAttempts     int
	pr              bool
	forgeURL        string
	noCache         bool
	hub             hubOptions
	sig             fleet.Author // set by validate
}

func newApplyCmd(e *env) *cobra.Command {
	var o applyOptions
	cmd := &cobra.Command{
		Use: "apply",
		Example: "  fleetform apply --control-plane . --env dev\n" +
			"  # into a local repository, and post the desired state to the hub\n" +
			"  fleetform apply --env dev --gitops ../platform-gitops --hub http://127.0.0.1:8080\n" +
			"  # open a pull request instead of pushing to the branch\n" +
			"  fleetform apply --env prod --pr",
		Short: "Write the environment's tree to the GitOps repository as one commit",
		Long: "apply plans (see plan) and writes the change as one commit on the GitOps branch: only what\n" +
			"changed is rendered and written; nothing changed means no commit. When someone else wrote\n" +
			"to the branch in between, it re-reads and re-plans (--max-attempts). It refuses to remove\n" +
			"more than --mass-delete-threshold of the deployment-target folders it owns unless\n" +
			"--allow-mass-delete is given. With --hub, it then posts what it scheduled to the hub\n" +
			"(the desired state at the commit written; token from FLEETFORM_HUB_TOKEN).\n\n" +
			"After an apply that ends clean, fleetform records in its cache which control-plane trees it\n" +
			"read and the branch tip it left: while those are unchanged, the next apply answers \"no change\"\n" +
			"without loading anything (not with --pr, --hub or --no-cache).",
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
	o.hub.Bind(cmd)
	f := cmd.Flags()
	f.BoolVar(&o.allowMassDelete, "allow-mass-delete", false, "allow removing more than --mass-delete-threshold of the owned folders")
	f.StringVar(&o.author, "author", "fleetform <fleetform@localhost>", "commit author, as \"Name <email>\"")
	f.StringVar(&o.subject, "message", "", "commit subject (default: names the environment and the control-plane commit)")
	f.IntVar(&o.maxAttempts, "max-attempts", fleet.DefaultMaxAttempts, "how many times to re-plan when the branch moved in between")
	f.BoolVar(&o.pr, "pr", false, "push to a new branch and open a pull request (GitHub; token from FLEETFORM_GITHUB_TOKEN or GITHUB_TOKEN)")
	f.StringVar(&o.forgeURL, "forge-url", "", "API base URL of the forge (GitHub Enterprise: https://HOST/api/v3/); default from the repository URL")
	f.BoolVar(&o.noCache, "no-cache", false, "load and plan in full, even when the record of the last apply shows that nothing changed since")
	return cmd
}

func applyText(w io.Writer, doc *fleet.ApplyResult) error {
	counts := map[string]int{}
	for _, c := range doc.Plan.Changes {
		counts[c.Action]++
	}
	switch {
	case doc.Refused != "":
		fmt.Fprintf(w, "apply %s: nothing written: %s\n", doc.Environment, doc.Refused)
	case doc.NoChange:
		fmt.Fprintf(w, "apply %s: no change, no commit (%d assignment(s) up to date)\n", doc.Environment, doc.Plan.Skipped)
	default:
		fmt.Fprintf(w, "apply %s: committed %s to %s\n", doc.Environment, doc.Commit[:min(len(doc.Commit), 12)], doc.Branch)
		if doc.PullRequest != nil {
			fmt.Fprintf(w, "pull request #%d into %s: %s\n", doc.PullRequest.Number, doc.PullRequest.Base, doc.PullRequest.URL)
		}
		if len(doc.Superseded) > 0 {
			fmt.Fprintf(w, "closed fleetform's superseded pull request(s): %v\n", doc.Superseded)
		}
		fmt.Fprintf(w, "files: %d added, %d modified, %d deleted; assignments: %d added, %d removed; %d re-rendered, %d unchanged\n",
			counts["add"], counts["modify"], counts["delete"], len(doc.Plan.AssignmentsAdded), len(doc.Plan.AssignmentsRemoved),
			doc.Plan.Rendered, doc.Plan.Skipped)
		if len(doc.Plan.ClusterTypesAffected) > 0 {
			fmt.Fprintf(w, "cluster types affected: %s\n", pipeline.ListOrNone(doc.Plan.ClusterTypesAffected))
		}
	}
	if n := len(doc.Plan.Failed); n > 0 {
		fmt.Fprintf(w, "%d assignment(s) failed and kept their previous files\n", n)
	}
	if n := len(doc.Plan.Deferred); n > 0 {
		fmt.Fprintf(w, "%d removal(s) deferred until the control plane has no errors\n", n)
	}
	return nil
}

func (o *applyOptions) validate() error {
	if err := o.out.Check(); err != nil {
		return err
	}
	if o.hub.URL != "" {
		if _, err := o.hub.Client(); err != nil {
			return err // before writing anything
		}
	}
	var err error
	o.sig, err = author(o.author)
	return err
}

func (o *applyOptions) run(ctx context.Context, e *env) error {
	o.cp.trusted = append(o.cp.trusted, o.forgeURL, o.g.repo) // hosts the command line names
	cfg, err := o.cp.config(e)
	if err != nil {
		return err
	}
	cfg.Author, cfg.ForgeURL = o.sig, o.forgeURL
	if cfg.Hub, err = o.hub.hub(); err != nil {
		return err
	}
	prog := newProgress(e, "rendering")
	write := o.g.write(prog)
	write.AllowMassDelete = o.allowMassDelete
	doc, err := fleet.New(cfg).Apply(ctx, fleet.ApplyRequest{Env: o.cp.env, GitOps: o.g.repo, Branch: o.g.branch, Path: o.g.path, Write: write,
		Subject: o.subject, MaxAttempts: o.maxAttempts, PullRequest: o.pr, Remember: !o.noCache})
	prog.finish()
	if doc == nil {
		return err
	}
	printDiagnostics(e.Stderr, doc.Diagnostics)
	if werr := o.out.Write(e.Stdout, doc, func(w io.Writer) error { return applyText(w, doc) }); werr != nil {
		return werr
	}
	if fleet.IsRefused(err) || fleet.IsInvalid(err) {
		return command.Reported(err)
	}
	return err
}
