package cli

import (
	"context"
	"fmt"
	"io"
	"net/mail"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/fleetform/fleetform/internal/cli/command"
	"github.com/fleetform/fleetform/internal/controlplane"
	"github.com/fleetform/fleetform/internal/forge"
	"github.com/fleetform/fleetform/internal/gitauth"
	"github.com/fleetform/fleetform/internal/gitops"
	"github.com/fleetform/fleetform/internal/pipeline"
	"github.com/fleetform/fleetform/internal/promote"
)

type promoteOptions struct {
	cp       controlPlaneOptions
	out      command.Output
	hub      hubOptions
	to       string
	commit   string
	override bool
	reason   string
	actor    string
	author   string
	pr       bool
	forgeURL string
	creds    *gitauth.Store // built by promoter
	statuses bool
	watch    bool
	interval time.Duration
	apply    bool
}

// promoteJSON is what `promote -o json` prints: the decision, and the pull request with --pr.
type promoteJSON struct {
	promote.Result
	PullRequest *pipeline.PullRequest `json:"pullRequest,omitempty"`
}

func newPromoteCmd(e *env) *cobra.Command {
	var o promoteOptions
	cmd := &cobra.Command{
		Use: "promote",
		Example: "  # promote what dev verified into stage (refused, exit 3, with the reason, when a gate is not met)\n" +
			"  fleetform promote --control-plane . --to stage --hub https://hub.example.com\n" +
			"  # an emergency override, recorded\n" +
			"  fleetform promote --to prod --commit 1a2b3c4 --override --reason \"CVE-2026-1234 hotfix\"\n" +
			"  # promote automatically along the chain, and apply\n" +
			"  fleetform promote --watch --interval 1m --hub https://hub.example.com",
		Short: "Pin a control-plane commit into an environment once it succeeded in the one before",
		Long: "promote checks the gates of --to (its source environment pinned to the commit, applied, and\n" +
			"compliant on the hub for the soak time; the approval; the freeze windows) and writes the pin\n" +
			"(base-repo.yaml) as a commit to the control plane, or as a pull request with --pr. A refusal\n" +
			"changes nothing, prints one sentence per unmet gate and exits 3. --watch follows the chain:\n" +
			"it promotes into every environment with automatic promotion as soon as its gates pass.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := o.check(); err != nil {
				return err
			}
			p, err := o.promoter(cmd.Context(), e)
			if err != nil {
				return err
			}
			if o.watch {
				return o.runWatch(cmd.Context(), e, p)
			}
			return o.promoteOnce(cmd.Context(), e, p)
		},
	}
	o.cp.bindRepo(cmd)
	o.out.Bind(cmd)
	o.hub.Bind(cmd)
	f := cmd.Flags()
	f.StringVar(&o.to, "to", "", "environment to promote into (required unless --watch)")
	_ = cmd.RegisterFlagCompletionFunc("to", o.cp.completeEnvironments(e))
	f.StringVar(&o.commit, "commit", "", "control-plane commit to promote; default: the source environment's pin (the tip for a first environment)")
	f.BoolVar(&o.override, "override", false, "promote despite unmet gates (emergencies; needs --reason, recorded)")
	f.StringVar(&o.reason, "reason", "", "why the gates are overridden (recorded in the hub's history and the commit message)")
	f.StringVar(&o.actor, "actor", defaultActor(), "who promotes (recorded); default $FLEETFORM_ACTOR, $GITHUB_ACTOR or $USER")
	f.StringVar(&o.author, "author", "fleetform <fleetform@localhost>", "author of the pin commit, as \"Name <email>\"")
	f.BoolVar(&o.pr, "pr", false, "push the pin to a new branch and open a pull request (GitHub; token from FLEETFORM_GITHUB_TOKEN or GITHUB_TOKEN)")
	f.StringVar(&o.forgeURL, "forge-url", "", "API base URL of the forge (GitHub Enterprise: https://HOST/api/v3/); default from the repository URL")
	f.BoolVar(&o.statuses, "commit-status", false, "set a commit status \"<env> environment\" on the promoted commit (GitHub; token as for --pr)")
	f.BoolVar(&o.watch, "watch", false, "follow the chain: promote into automatic environments as their gates pass, then apply them")
	f.DurationVar(&o.interval, "interval", time.Minute, "with --watch: how often to check the gates")
	f.BoolVar(&o.apply, "apply", true, "with --watch: apply an environment after promoting into it")
	return cmd
}

func defaultActor() string {
	for _, k := range []string{"FLEETFORM_ACTOR", "GITHUB_ACTOR", "USER"} {
		if v := os.Getenv(k); v != "" {
			return v
		}
	}
	return ""
}

func (o *promoteOptions) check() error {
	if err := o.out.Check(); err != nil {
		return err
	}
	switch {
	case o.watch && (o.to != "" || o.commit != "" || o.override || o.pr):
		return failed(ExitUsage, fmt.Errorf("--watch follows the chain: it takes no --to, --commit, --override or --pr"))
	case !o.watch && o.to == "":
		return failed(ExitUsage, fmt.Errorf("--to is required"))
	case o.override && strings.TrimSpace(o.reason) == "":
		return failed(ExitUsage, fmt.Errorf("--override needs --reason: overrides are recorded"))
	case o.watch && o.interval <= 0:
		return failed(ExitUsage, fmt.Errorf("--interval must be positive"))
	}
	return nil
}

// promoter builds the promoter: git writer, hub (with --hub), author, commit statuses.
func (o *promoteOptions) promoter(ctx context.Context, e *env) (*promote.Promoter, error) {
	addr, err := mail.ParseAddress(o.author)
	if err != nil {
		return nil, failed(ExitUsage, fmt.Errorf("--author %q: want \"Name <email>\"", o.author))
	}
	o.cp.trusted = append(o.cp.trusted, o.forgeURL)
	creds, err := o.cp.credentials(e)
	if err != nil {
		return nil, err
	}
	o.creds = creds
	p := &promote.Promoter{Git: gitops.NewWriter(gitops.Options{Logger: e.Logger, CacheDir: os.Getenv("FLEETFORM_CACHE_DIR"), Credentials: creds}),
		Logger: e.Logger, Commit: gitops.CommitOptions{AuthorName: addr.Name, AuthorEmail: addr.Address}}
	if o.hub.URL != "" {
		if p.Hub, err = o.hub.promoteHub(ctx); err != nil {
			return nil, err
		}
	}
	if o.statuses {
		repo, client, err := pipeline.ForgeClient(ctx, creds, o.cp.controlPlane, o.forgeURL)
		if err != nil {
			return nil, failed(ExitUsage, fmt.Errorf("--commit-status needs the control plane's URL on a forge and a token: %w", err))
		}
		p.Statuses = statusReporter{repo: repo, client: client}
	}
	return p, nil
}

// statusReporter binds commit statuses to the control-plane repository.
type statusReporter struct {
	repo   forge.Repo
	client forge.CommitStatuses
}

func (s statusReporter) SetStatus(ctx context.Context, commit string, st forge.CommitStatus) error {
	return s.client.SetStatus(ctx, s.repo, commit, st)
}

// promoteOnce promotes one commit into --to and reports the decision.
func (o *promoteOptions) promoteOnce(ctx context.Context, e *env, p *promote.Promoter) error {
	cp, err := o.cp.open(ctx, e)
	if err != nil {
		return err
	}
	var pr *pipeline.PullRequests
	if o.pr {
		if pr, err = o.pullRequests(ctx, e, cp); err != nil {
			return err
		}
		p.Commit.HeadBranch = pr.Head("promote")
	}
	res, err := p.Promote(ctx, promote.Request{ControlPlane: cp, To: o.to, Commit: o.commit, Override: o.override,
		Reason: o.reason, Actor: o.actor, Now: time.Now()})
	if err != nil {
		return failed(ExitFailed, err)
	}
	doc := promoteJSON{Result: res}
	if pr != nil && res.PinCommit != "" {
		if doc.PullRequest, err = o.openPullRequest(ctx, pr, p.Commit.HeadBranch, res); err != nil {
			return failed(ExitFailed, err)
		}
	}
	if err := o.out.Write(e.Stdout, doc, func(w io.Writer) error { return promoteText(w, doc) }); err != nil {
		return failed(ExitFailed, err)
	}
	if !res.Promoted {
		return failed(ExitRefused, nil)
	}
	return nil
}

// pullRequests opens the pin's pull request into the branch the pin is written on.
func (o *promoteOptions) pullRequests(ctx context.Context, e *env, cp *controlplane.ControlPlane) (*pipeline.PullRequests, error) {
	envs, _, err := cp.Environments(ctx)
	if err != nil {
		return nil, failed(ExitFailed, err)
	}
	for _, info := range envs {
		if info.Name != o.to {
			continue
		}
		loc, err := cp.PinLocation(info)
		if err != nil {
			return nil, failed(ExitFailed, err)
		}
		prs, err := pipeline.NewPullRequests(ctx, o.creds, gitops.Target{Repo: o.cp.controlPlane, Branch: loc.Branch}, o.to, o.forgeURL, e.Logger)
		if err != nil {
			return nil, failed(ExitUsage, fmt.Errorf("--pr needs the repository's URL on a forge and a token: %w", err))
		}
		return prs, nil
	}
	return nil, failed(ExitUsage, fmt.Errorf("environment %q is not declared", o.to))
}

func (o *promoteOptions) openPullRequest(ctx context.Context, pr *pipeline.PullRequests, head string, res promote.Result) (*pipeline.PullRequest, error) {
	title := fmt.Sprintf("fleetform: promote %s to %s", res.Commit[:min(len(res.Commit), 12)], res.To)
	var body strings.Builder
	fmt.Fprintf(&body, "Pins the common content of `%s` to control-plane commit `%s`", res.To, res.Commit)
	if res.From != "" {
		fmt.Fprintf(&body, ", verified in `%s`", res.From)
	}
	body.WriteString(".\n")
	if len(res.Overridden) > 0 {
		fmt.Fprintf(&body, "\n**Overridden gates** (%s):\n", o.reason)
		for _, r := range res.Overridden {
			fmt.Fprintf(&body, "- %s\n", r)
		}
	}
	body.WriteString("\n" + forge.Marker(res.To) + "\n")
	doc, _, err := pr.Create(ctx, forge.NewChangeRequest{Base: pr.Base(), Head: head, Title: title,
		Body: body.String(), Labels: []string{"fleetform", "promotion"}})
	return doc, err
}

func promoteText(w io.Writer, doc promoteJSON) error {
	res := doc.Result
	c := res.Commit[:min(len(res.Commit), 12)]
	if !res.Promoted {
		fmt.Fprintf(w, "not promoted: %s into %s\n", c, res.To)
		for _, r := range res.Reasons {
			fmt.Fprintf(w, "  - %s\n", r)
		}
		return nil
	}
	from := ""
	if res.From != "" {
		from = " from " + res.From
	}
	if res.PinCommit == "" {
		fmt.Fprintf(w, "%s already pins %s%s\n", res.To, c, from)
	} else {
		fmt.Fprintf(w, "promoted %s%s to %s (pin commit %s)\n", c, from, res.To, res.PinCommit[:min(len(res.PinCommit), 12)])
	}
	for _, r := range res.Overridden {
		fmt.Fprintf(w, "  overridden: %s\n", r)
	}
	if doc.PullRequest != nil {
		fmt.Fprintf(w, "pull request #%d: %s\n", doc.PullRequest.Number, doc.PullRequest.URL)
	}
	return nil
}

// runWatch follows the chain until interrupted.
func (o *promoteOptions) runWatch(ctx context.Context, e *env, p *promote.Promoter) error {
	w := &promote.Watcher{Promoter: p, Actor: o.actor, Logger: e.Logger,
		Open: func(ctx context.Context) (*controlplane.ControlPlane, error) { return o.cp.open(ctx, e) }}
	if o.apply {
		w.Apply = pipeline.AfterPromotion(p.Git, p.Commit, o.hub.poster(), e.Logger)
	}
	if err := w.Run(ctx, o.interval); err != nil && ctx.Err() == nil {
		return failed(ExitFailed, err)
	}
	return nil // interrupted: the normal way to stop watching
}
