package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/fleetform/fleetform/internal/cli/command"
	"github.com/fleetform/fleetform/internal/fleet"
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
	statuses bool
	watch    bool
	interval time.Duration
	apply    bool
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
			f, err := o.fleet(e)
			if err != nil {
				return err
			}
			if o.watch {
				return f.Watch(cmd.Context(), o.actor, o.interval, o.apply)
			}
			return o.promoteOnce(cmd.Context(), e, f)
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
		return command.Usagef("--watch follows the chain: it takes no --to, --commit, --override or --pr")
	case !o.watch && o.to == "":
		return command.Usagef("--to is required")
	case o.override && strings.TrimSpace(o.reason) == "":
		return command.Usagef("--override needs --reason: overrides are recorded")
	case o.watch && o.interval <= 0:
		return command.Usagef("--interval must be positive")
	}
	return nil
}

// fleet builds the application layer of a promotion: its author, forge and hub.
func (o *promoteOptions) fleet(e *env) (*fleet.Fleet, error) {
	sig, err := author(o.author)
	if err != nil {
		return nil, err
	}
	o.cp.trusted = append(o.cp.trusted, o.forgeURL)
	cfg, err := o.cp.config(e)
	if err != nil {
		return nil, err
	}
	cfg.Author, cfg.ForgeURL = sig, o.forgeURL
	if cfg.Hub, err = o.hub.hub(); err != nil {
		return nil, err
	}
	return fleet.New(cfg), nil
}

// promoteOnce promotes one commit into --to and reports the decision.
func (o *promoteOptions) promoteOnce(ctx context.Context, e *env, f *fleet.Fleet) error {
	doc, err := f.Promote(ctx, fleet.PromoteRequest{To: o.to, Commit: o.commit, Override: o.override, Reason: o.reason,
		Actor: o.actor, PullRequest: o.pr, CommitStatus: o.statuses, Now: time.Now()})
	if doc == nil {
		return err
	}
	if werr := o.out.Write(e.Stdout, doc, func(w io.Writer) error { return promoteText(w, doc) }); werr != nil {
		return werr
	}
	return command.Reported(err)
}

func promoteText(w io.Writer, doc *fleet.PromoteResult) error {
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
