package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/fleetform/fleetform/internal/app"
	"github.com/fleetform/fleetform/internal/gitops/gitrepo"
	"github.com/fleetform/fleetform/internal/hub"
	"github.com/fleetform/fleetform/internal/promote"
)

type appPromoteOptions struct {
	apply appApplyOptions
	from  string
	to    string
}

// appPromoteJSON is what `app promote -o json` prints.
type appPromoteJSON struct {
	Promoted bool          `json:"promoted"`
	Workload string        `json:"workload"`
	From     string        `json:"from"`
	To       string        `json:"to"`
	Commit   string        `json:"commit"`
	Version  string        `json:"version,omitempty"`
	ImageTag string        `json:"imageTag,omitempty"`
	Reasons  []string      `json:"reasons"`
	Apply    *app.Result   `json:"apply,omitempty"`
	Gates    promote.Gates `json:"gates"`
}

func newAppPromoteCmd(e *env) *cobra.Command {
	var o appPromoteOptions
	cmd := &cobra.Command{
		Use:     "promote",
		Example: "  fleetform app promote --source https://github.com/org/hello-world --config-repo https://github.com/org/hello-config --from dev --to stage --hub https://hub.example.com --pr",
		Short:   "Deploy the source commit and version an environment runs to the next one, when the hub says it works there",
		Long: "promote reads what the --from environment's deployment targets run (their tracking files in\n" +
			"the app GitOps repository: the source commit, the version and the image tag), checks the\n" +
			"gates of fleetform-app.yaml's promotion.<to> (the platform's: each of the workload's targets\n" +
			"has minCompliantPercent of its clusters compliant in the hub, for the soak time, and the\n" +
			"source commit is approved when approval is set) and, when they pass, renders that source\n" +
			"commit with that version for --to and applies it (--pr: as a pull request). The decision is\n" +
			"recorded in the hub's history. Exit code 3 when a gate refuses. The source repository must\n" +
			"be a git repository (it is read at the promoted commit).",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := o.validate(); err != nil {
				return err
			}
			return o.run(cmd.Context(), e)
		},
	}
	o.apply.app.bind(cmd)
	o.apply.hub.Bind(cmd)
	f := cmd.Flags()
	f.StringVar(&o.from, "from", "", "the environment whose version is promoted")
	f.StringVar(&o.to, "to", "", "the environment it is promoted into")
	f.StringVar(&o.apply.gitops, "gitops", "", "the app GitOps repository (path or URL; default: the targets' manifests.repo, through --repo-map)")
	f.BoolVar(&o.apply.pr, "pr", false, "open (or update) a pull request instead of writing to the branch")
	f.StringVar(&o.apply.forgeURL, "forge-url", "", "API base URL of the forge (GitHub Enterprise: https://HOST/api/v3/)")
	f.StringVar(&o.apply.author, "author", "fleetform <fleetform@localhost>", "commit author, as \"Name <email>\"")
	return cmd
}

func (o *appPromoteOptions) validate() error {
	if o.from == "" || o.to == "" {
		return failed(ExitUsage, errors.New("--from and --to are required"))
	}
	if o.apply.app.env != "" {
		return failed(ExitUsage, errors.New("--env: app promote takes --from and --to"))
	}
	if o.apply.app.sourceRef != "" || o.apply.app.version != "" || o.apply.app.imageTag != "" {
		return failed(ExitUsage, errors.New("--source-ref, --version and --image-tag: app promote takes them from what --from runs"))
	}
	o.apply.app.env = o.to
	if err := o.apply.validate(); err != nil {
		return err
	}
	if o.apply.hub.URL == "" {
		return failed(ExitUsage, errors.New("--hub is required: the gates are checked on the hub"))
	}
	return nil
}

func (o *appPromoteOptions) run(ctx context.Context, e *env) error {
	ao := &o.apply.app
	repos, err := ao.repos(e)
	if err != nil {
		return err
	}
	tip, err := ao.loadSource(ctx, repos, "")
	if err != nil {
		return err
	}
	doc := appPromoteJSON{Workload: tip.Workload.Metadata.Name, From: o.from, To: o.to, Reasons: []string{}}
	if doc.Gates, err = tip.Gates(o.from, o.to); err != nil {
		return failed(ExitFailed, err)
	}
	deployed, err := o.deployed(ctx, e, tip)
	if err != nil {
		return err
	}
	doc.Commit, doc.Version, doc.ImageTag = deployed.Commit, deployed.Version, deployed.ImageTag
	h, err := o.apply.hub.promoteHub(ctx)
	if err != nil {
		return err
	}
	reasons, err := app.CheckPromotion(ctx, h, doc.Gates, doc.Workload, deployed, time.Now())
	if err != nil {
		return failed(ExitFailed, err)
	}
	if len(reasons) > 0 {
		doc.Reasons = reasons
		o.record(ctx, e, h, doc, "refused: "+strings.Join(reasons, "; "))
		return o.print(e, &doc, failed(ExitRefused, nil))
	}
	a, err := ao.loadSource(ctx, repos, deployed.Commit)
	if err != nil {
		return err
	}
	r, err := ao.compose(ctx, repos, a, o.to, ao.varMap, deployed.Version, deployed.ImageTag)
	if err != nil {
		return err
	}
	res, err := applyRun(ctx, e, ao, r, o.apply.gitops, o.apply.pr, o.apply.forgeURL, o.apply.sig, false)
	if err != nil {
		return err
	}
	doc.Apply, doc.Promoted = res, !res.Failed()
	if !doc.Promoted {
		o.record(ctx, e, h, doc, "failed: the deployment targets of "+o.to+" could not all be rendered")
		return o.print(e, &doc, failed(ExitFailed, nil))
	}
	if err := postVersions(ctx, &o.apply.hub, r, res); err != nil {
		return failed(ExitFailed, err)
	}
	o.record(ctx, e, h, doc, fmt.Sprintf("promoted %s %s (commit %s) from %s to %s", doc.Workload, orCommit(doc.Version, doc.Commit),
		shortCommit(doc.Commit), o.from, o.to))
	return o.print(e, &doc, nil)
}

// deployed reads what the --from environment's targets run.
func (o *appPromoteOptions) deployed(ctx context.Context, e *env, a *app.App) (app.Deployed, error) {
	targets := a.Targets(o.from)
	if len(targets) == 0 {
		return app.Deployed{}, failed(ExitFailed, fmt.Errorf("%s: workload %s has no deployment target in %s", a.Workload.Source.File, a.Workload.Metadata.Name, o.from))
	}
	r := &app.Run{Env: o.from}
	for _, t := range targets {
		r.Targets = append(r.Targets, &app.TargetRun{Target: t})
	}
	location, err := gitopsLocation(&o.apply.app, e, r, o.apply.gitops)
	if err != nil {
		return app.Deployed{}, err
	}
	creds, err := o.apply.app.cp.credentials(e)
	if err != nil {
		return app.Deployed{}, err
	}
	repo, err := gitrepo.Open(ctx, location, os.Getenv("FLEETFORM_CACHE_DIR"), creds, e.Logger)
	if err != nil {
		return app.Deployed{}, failed(ExitFailed, err)
	}
	d, err := app.ReadDeployed(ctx, repo, o.from, targets)
	if err != nil {
		return d, failed(ExitFailed, err)
	}
	return d, nil
}

// record appends the decision to the hub's history (a failure to record is a warning).
func (o *appPromoteOptions) record(ctx context.Context, e *env, h promote.Hub, doc appPromoteJSON, msg string) {
	ev := hub.Event{Time: time.Now().UTC(), Kind: hub.EventPromotion, Environment: o.to, Workload: doc.Workload,
		Revision: doc.Commit, From: o.from, To: o.to, Message: msg}
	if err := h.Record(ctx, ev); err != nil {
		e.Logger.WarnContext(ctx, "recording the promotion in the hub", "error", err.Error())
	}
}

func (o *appPromoteOptions) print(e *env, doc *appPromoteJSON, result error) error {
	err := o.apply.app.out.Write(e.Stdout, doc, func(w io.Writer) error {
		if !doc.Promoted {
			fmt.Fprintf(w, "app promote %s %s -> %s: refused\n", doc.Workload, doc.From, doc.To)
			for _, r := range doc.Reasons {
				fmt.Fprintf(w, "  - %s\n", r)
			}
			return nil
		}
		fmt.Fprintf(w, "app promote %s %s -> %s: promoted %s (commit %s)\n", doc.Workload, doc.From, doc.To,
			orCommit(doc.Version, doc.Commit), shortCommit(doc.Commit))
		return appText(w, "apply", doc.Apply)
	})
	if err != nil {
		return failed(ExitFailed, err)
	}
	return result
}

func orCommit(version, commit string) string {
	if version != "" {
		return version
	}
	return shortCommit(commit)
}

func shortCommit(c string) string { return c[:min(len(c), 7)] }
