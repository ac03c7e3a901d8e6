package cli

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/fleetform/fleetform/internal/cli/command"
	"github.com/fleetform/fleetform/internal/fleet"
)

type appPromoteOptions struct {
	apply appApplyOptions
	from  string
	to    string
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
		return command.Usage(errors.New("--from and --to are required"))
	}
	if o.apply.app.env != "" {
		return command.Usage(errors.New("--env: app promote takes --from and --to"))
	}
	if o.apply.app.sourceRef != "" || o.apply.app.version != "" || o.apply.app.imageTag != "" {
		return command.Usage(errors.New("--source-ref, --version and --image-tag: app promote takes them from what --from runs"))
	}
	o.apply.app.env = o.to
	if err := o.apply.validate(); err != nil {
		return err
	}
	if o.apply.hub.URL == "" {
		return command.Usage(errors.New("--hub is required: the gates are checked on the hub"))
	}
	return nil
}

func (o *appPromoteOptions) run(ctx context.Context, e *env) error {
	f, err := o.apply.fleet(e)
	if err != nil {
		return err
	}
	doc, err := f.AppPromote(ctx, o.apply.request(), o.from, o.to)
	if doc == nil {
		return err
	}
	return o.print(e, doc, command.Reported(err))
}

func (o *appPromoteOptions) print(e *env, doc *fleet.AppPromotion, result error) error {
	err := o.apply.app.out.Write(e.Stdout, doc, func(w io.Writer) error {
		if !doc.Promoted {
			fmt.Fprintf(w, "app promote %s %s -> %s: refused\n", doc.Workload, doc.From, doc.To)
			for _, r := range doc.Reasons {
				fmt.Fprintf(w, "  - %s\n", r)
			}
			return nil
		}
		fmt.Fprintf(w, "app promote %s %s -> %s: promoted %s (commit %s)\n", doc.Workload, doc.From, doc.To,
			doc.Promotes(), doc.ShortCommit())
		return appText(w, "apply", doc.Apply)
	})
	if err != nil {
		return err
	}
	return result
}
