package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/mail"
	"os"
	"path/filepath"
	"slices"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/fleetform/fleetform/internal/cli/command"
	"github.com/fleetform/fleetform/internal/gitops"
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
	co              gitops.CommitOptions // set by validate
}

// applyJSON is what `apply -o json` prints.
type applyJSON struct {
	Environment string `json:"environment"`
	Commit      string `json:"commit"`
	Branch      string `json:"branch"`
	Attempts    int    `json:"attempts"`
	NoChange    bool   `json:"noChange"`
	Refused     string `json:"refused,omitempty"`
	// PullRequest is set with --pr; Superseded lists fleetform's earlier pull requests it closed.
	PullRequest *pipeline.PullRequest `json:"pullRequest,omitempty"`
	Superseded  []int                 `json:"superseded,omitempty"`
	Plan        pipeline.PlanReport   `json:"plan"`
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
	f.IntVar(&o.maxAttempts, "max-attempts", gitops.DefaultMaxAttempts, "how many times to re-plan when the branch moved in between")
	f.BoolVar(&o.pr, "pr", false, "push to a new branch and open a pull request (GitHub; token from FLEETFORM_GITHUB_TOKEN or GITHUB_TOKEN)")
	f.StringVar(&o.forgeURL, "forge-url", "", "API base URL of the forge (GitHub Enterprise: https://HOST/api/v3/); default from the repository URL")
	f.BoolVar(&o.noCache, "no-cache", false, "load and plan in full, even when the record of the last apply shows that nothing changed since")
	return cmd
}

func (o *applyOptions) commitOptions() (gitops.CommitOptions, error) {
	addr, err := mail.ParseAddress(o.author)
	if err != nil {
		return gitops.CommitOptions{}, failed(ExitUsage, fmt.Errorf("--author %q: want \"Name <email>\"", o.author))
	}
	return gitops.CommitOptions{AuthorName: addr.Name, AuthorEmail: addr.Address, Subject: o.subject, MaxAttempts: o.maxAttempts}, nil
}

// report prints what apply did and chooses the exit code; doc is filled in.
func (o *applyOptions) report(e *env, r *pipeline.Run, res *gitops.Result, applyErr error, doc *applyJSON) error {
	if res == nil || res.Plan == nil {
		return failed(ExitFailed, applyErr)
	}
	doc.Environment, doc.Branch, doc.Attempts = res.Plan.Environment, res.Branch, res.Attempts
	doc.NoChange, doc.Plan = res.Plan.NoChange(), pipeline.Report(res.Plan, r, false)
	if !res.Commit.IsZero() {
		doc.Commit = res.Commit.String()
	}
	if applyErr != nil && errors.Is(applyErr, gitops.ErrRefused) {
		doc.Refused = applyErr.Error()
	} else if applyErr != nil {
		return failed(ExitFailed, applyErr)
	}
	printDiagnostics(e.Stderr, r.DiagnosticsWith(res.Plan.Output))
	err := o.out.Write(e.Stdout, doc, func(w io.Writer) error { return applyText(w, doc) })
	if err != nil {
		return failed(ExitFailed, err)
	}
	switch {
	case doc.Refused != "":
		return failed(ExitRefused, nil)
	case len(doc.Plan.Errors) > 0:
		return failed(ExitFailed, nil)
	}
	return nil
}

func applyText(w io.Writer, doc *applyJSON) error {
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
	o.co, err = o.commitOptions()
	return err
}

func (o *applyOptions) run(ctx context.Context, e *env) error {
	o.cp.trusted = append(o.cp.trusted, o.forgeURL, o.g.repo) // hosts the command line names
	ctl, err := o.cp.open(ctx, e)
	if err != nil {
		return err
	}
	creds, err := o.cp.credentials(e)
	if err != nil {
		return err
	}
	memos, key := o.memos(e)
	if memos != nil {
		if noop, ok := memos.Unchanged(ctx, key, ctl, writerFor(e, &o.g, creds, false, nil)); ok {
			doc := applyJSON{Environment: noop.Environment, Attempts: 1, NoChange: true, Plan: *noop}
			if err := o.out.Write(e.Stdout, doc, func(w io.Writer) error { return applyText(w, &doc) }); err != nil {
				return failed(ExitFailed, err) // as a full apply's report
			}
			return nil
		}
	}
	r, target, err := loadOpened(ctx, ctl, &o.cp, &o.g)
	if err != nil {
		return err
	}
	opts := pipeline.ApplyOptions{Target: target, Commit: o.co, Hub: o.hub.poster()}
	if o.pr {
		opts.PullRequests, err = pipeline.NewPullRequests(ctx, creds, target, r.Snapshot.Environment, o.forgeURL, e.Logger)
		if err != nil {
			return failed(ExitUsage, fmt.Errorf("--pr needs the repository's URL on a forge and a token: %w", err))
		}
	}
	prog := newProgress(e, "rendering")
	applied, err := pipeline.Apply(ctx, writerFor(e, &o.g, creds, o.allowMassDelete, prog), r, opts)
	prog.finish()
	doc := applyJSON{PullRequest: applied.PullRequest, Superseded: applied.Superseded}
	reportErr := o.report(e, r, applied.Result, err, &doc)
	if memos != nil && err == nil {
		memos.Remember(key, r, applied, doc.Plan)
	}
	if reportErr != nil || applied.HubErr == nil {
		return reportErr
	}
	return failed(ExitFailed, fmt.Errorf("the commit is written, but: %w", applied.HubErr))
}

// memos returns where the record of the last apply is kept and its key; nil when this apply
// may not be answered from it (--no-cache, --pr, --hub, or no cache directory).
func (o *applyOptions) memos(e *env) (*pipeline.Memos, string) {
	if o.noCache || o.pr || o.hub.URL != "" {
		return nil, ""
	}
	dir := os.Getenv("FLEETFORM_CACHE_DIR")
	if dir == "" {
		base, err := os.UserCacheDir()
		if err != nil {
			return nil, ""
		}
		dir = filepath.Join(base, "fleetform")
	}
	opts, err := o.cp.platformOptions(e)
	if err != nil {
		return nil, ""
	}
	wd, _ := os.Getwd() // "" is a key part too
	parts := []string{"apply", wd, o.cp.configFile, o.cp.controlPlane, o.cp.env, opts.Ref, opts.CommonRef, string(opts.Layout),
		o.g.repo, o.g.branch, o.g.path, strconv.FormatFloat(o.g.threshold, 'g', -1, 64)}
	for _, k := range slices.Sorted(maps.Keys(opts.RepoMap)) {
		parts = append(parts, "repo-map "+k+"="+opts.RepoMap[k])
	}
	for _, k := range slices.Sorted(maps.Keys(opts.GitOps)) {
		parts = append(parts, "gitops "+k+"="+opts.GitOps[k])
	}
	return pipeline.NewMemos(filepath.Join(dir, "unchanged"), e.Logger), pipeline.MemoKey(parts...)
}
