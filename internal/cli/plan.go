package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/aymanbagabas/go-udiff"
	"github.com/spf13/cobra"

	"github.com/fleetform/fleetform/internal/gitops"
	"github.com/fleetform/fleetform/internal/pipeline"
	"github.com/fleetform/fleetform/internal/redact"
)

type planOptions struct {
	cp  controlPlaneOptions
	out outputOption
	g   gitopsOptions
}

// planJSON is the contract of `plan -o json` (and the plan part of `apply -o json`).
type planJSON struct {
	Environment          string                    `json:"environment"`
	Target               targetJSON                `json:"target"`
	Base                 string                    `json:"base"`
	Changes              []changeJSON              `json:"changes"`
	AssignmentsAdded     []gitops.AssignmentRef    `json:"assignmentsAdded"`
	AssignmentsRemoved   []gitops.AssignmentRef    `json:"assignmentsRemoved"`
	ClusterTypesAffected []string                  `json:"clusterTypesAffected"`
	Deferred             []string                  `json:"deferred"`
	Failed               []gitops.FailedAssignment `json:"failed"`
	Rendered             int                       `json:"rendered"`
	Skipped              int                       `json:"skipped"`
	MassDelete           *gitops.MassDelete        `json:"massDelete"`
	// Pinned lists the assignments whose manifests a pin of the environment holds.
	Pinned []pinnedJSON `json:"pinned"`
	diagnosticsJSON
}

type pinnedJSON struct {
	DeploymentTarget string            `json:"deploymentTarget"`
	ClusterType      string            `json:"clusterType"`
	Manifests        map[string]string `json:"manifests"`
	Reason           string            `json:"reason,omitempty"`
}

type targetJSON struct {
	Repo   string `json:"repo"`
	Branch string `json:"branch"`
	Path   string `json:"path"`
}

type changeJSON struct {
	Path   string `json:"path"`
	Action string `json:"action"`
	Diff   string `json:"diff,omitempty"`
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
			if err := o.out.check(); err != nil {
				return err
			}
			r, target, err := loadForGitops(cmd, e, &o.cp, &o.g)
			if err != nil {
				return err
			}
			creds, err := o.cp.credentials(e)
			if err != nil {
				return err
			}
			prog := newProgress(e, "rendering")
			p, err := writerFor(e, &o.g, creds, false, prog).Plan(cmd.Context(), gitopsInput(r, target))
			prog.finish()
			if err != nil {
				return failed(ExitFailed, err)
			}
			doc := toPlanJSON(p, r, o.g.diff)
			printDiagnostics(e.stderr, r.DiagnosticsWith(p.Output))
			if err := o.out.write(e.stdout, doc, func(w io.Writer) error { return planText(w, &doc, o.g.diff) }); err != nil {
				return failed(ExitFailed, err)
			}
			if len(doc.Errors) > 0 {
				return failed(ExitFailed, nil)
			}
			return nil
		},
	}
	o.cp.bind(cmd, e, true)
	o.out.bind(cmd)
	o.g.bind(cmd)
	cmd.Flags().BoolVar(&o.g.diff, "diff", false, "show the unified diff of every changed file")
	return cmd
}

// loadForGitops loads the environment and resolves the GitOps target.
func loadForGitops(cmd *cobra.Command, e *env, cp *controlPlaneOptions, g *gitopsOptions) (*pipeline.Run, gitops.Target, error) {
	cp.trusted = append(cp.trusted, g.repo) // --gitops, when given, names a host to trust
	ctl, err := cp.open(cmd.Context(), e)
	if err != nil {
		return nil, gitops.Target{}, err
	}
	envs, err := cp.environments(cmd.Context(), ctl, false)
	if err != nil {
		return nil, gitops.Target{}, err
	}
	r, err := runPipeline(cmd.Context(), ctl, envs[0], pipeline.UpToSchedule, renderDefaults())
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

func toPlanJSON(p *gitops.Plan, r *pipeline.Run, withDiff bool) planJSON {
	doc := planJSON{
		Environment: p.Environment, Target: targetJSON{Repo: redact.URL(p.Target.Repo), Branch: p.Target.Branch, Path: p.Target.Path},
		Changes: []changeJSON{}, AssignmentsAdded: nonNil(p.AssignmentsAdded), AssignmentsRemoved: nonNil(p.AssignmentsRemoved),
		ClusterTypesAffected: nonNil(p.ClusterTypesAffected), Deferred: nonNil(p.Deferred), Failed: nonNil(p.Failed),
		Rendered: p.Rendered, Skipped: p.Skipped, MassDelete: p.MassDelete,
		diagnosticsJSON: splitDiagnostics(r.DiagnosticsWith(p.Output)),
	}
	if !p.Base.IsZero() {
		doc.Base = p.Base.String()
	}
	doc.Pinned = []pinnedJSON{}
	for i := range p.Output.Assignments {
		if a := &p.Output.Assignments[i]; a.Pinned != nil {
			doc.Pinned = append(doc.Pinned, pinnedJSON{DeploymentTarget: a.DeploymentTarget, ClusterType: a.ClusterType,
				Manifests: a.Pinned.Manifests, Reason: a.Pinned.Reason})
		}
	}
	for _, c := range p.Changes {
		cj := changeJSON{Path: c.Path, Action: c.Action}
		if withDiff {
			cj.Diff = udiff.Unified("a/"+c.Path, "b/"+c.Path, string(c.Old), string(c.New))
		}
		doc.Changes = append(doc.Changes, cj)
	}
	return doc
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// maxListed bounds the files listed in the text output (a pull-request comment).
const maxListed = 100

// planText writes the plan as Markdown: a summary table first, then the files, then diffs.
func planText(w io.Writer, doc *planJSON, withDiff bool) error {
	counts := map[string]int{}
	for _, c := range doc.Changes {
		counts[c.Action]++
	}
	fmt.Fprintf(w, "### fleetform plan: %s → %s (branch %s, path %s)\n\n", doc.Environment, doc.Target.Repo, doc.Target.Branch, orDot(doc.Target.Path))
	if len(doc.Changes) == 0 {
		fmt.Fprintf(w, "No changes. %d assignment(s) unchanged.\n", doc.Skipped)
	}
	fmt.Fprintln(w, "| | |\n|---|---|")
	fmt.Fprintf(w, "| files added / modified / deleted | %d / %d / %d |\n", counts["add"], counts["modify"], counts["delete"])
	fmt.Fprintf(w, "| assignments added / removed | %d / %d |\n", len(doc.AssignmentsAdded), len(doc.AssignmentsRemoved))
	fmt.Fprintf(w, "| cluster types affected | %s |\n", listOrNone(doc.ClusterTypesAffected))
	fmt.Fprintf(w, "| assignments re-rendered / unchanged | %d / %d |\n", doc.Rendered, doc.Skipped)
	if doc.MassDelete != nil {
		fmt.Fprintf(w, "\n**Refused by apply:** %s\n", doc.MassDelete.Error())
	}
	if len(doc.Failed) > 0 {
		fmt.Fprintf(w, "\n**%d assignment(s) failed and keep their previous files:**\n\n", len(doc.Failed))
		for _, f := range doc.Failed[:min(len(doc.Failed), maxListed)] {
			fmt.Fprintf(w, "- `%s/%s`: %s\n", f.ClusterType, f.DeploymentTarget, f.Error)
		}
	}
	if len(doc.Deferred) > 0 {
		fmt.Fprintf(w, "\n**%d removal(s) deferred** until the control plane has no errors: %s\n", len(doc.Deferred), strings.Join(doc.Deferred[:min(len(doc.Deferred), 20)], ", "))
	}
	if len(doc.Pinned) > 0 {
		fmt.Fprintf(w, "\n**%d assignment(s) pinned** by the environment's pins:\n\n", len(doc.Pinned))
		for _, p := range doc.Pinned[:min(len(doc.Pinned), maxListed)] {
			fmt.Fprintf(w, "- `%s` on `%s`: %v %s\n", p.DeploymentTarget, p.ClusterType, p.Manifests, p.Reason)
		}
	}
	assignmentList(w, "Assignments added", doc.AssignmentsAdded)
	assignmentList(w, "Assignments removed", doc.AssignmentsRemoved)
	if len(doc.Changes) > 0 {
		fmt.Fprintln(w, "\n| action | file |\n|---|---|")
		for _, c := range doc.Changes[:min(len(doc.Changes), maxListed)] {
			fmt.Fprintf(w, "| %s | `%s` |\n", c.Action, c.Path)
		}
		if n := len(doc.Changes) - maxListed; n > 0 {
			fmt.Fprintf(w, "| … | and %d more |\n", n)
		}
	}
	if withDiff {
		for _, c := range doc.Changes[:min(len(doc.Changes), maxListed)] {
			fmt.Fprintf(w, "\n```diff\n%s```\n", c.Diff)
		}
	}
	return nil
}

func assignmentList(w io.Writer, title string, as []gitops.AssignmentRef) {
	if len(as) == 0 {
		return
	}
	fmt.Fprintf(w, "\n%s:\n\n", title)
	for _, a := range as[:min(len(as), maxListed)] {
		fmt.Fprintf(w, "- `%s` on `%s`\n", a.DeploymentTarget, a.ClusterType)
	}
	if n := len(as) - maxListed; n > 0 {
		fmt.Fprintf(w, "- and %d more\n", n)
	}
}

func listOrNone(s []string) string {
	if len(s) == 0 {
		return "none"
	}
	if len(s) > 20 {
		return strings.Join(s[:20], ", ") + fmt.Sprintf(" and %d more", len(s)-20)
	}
	return strings.Join(s, ", ")
}

func orDot(p string) string {
	if p == "" {
		return "."
	}
	return p
}
