package pipeline

import (
	"fmt"
	"io"
	"strings"

	"github.com/aymanbagabas/go-udiff"

	"github.com/fleetform/fleetform/internal/controlplane"
	"github.com/fleetform/fleetform/internal/gitops"
	"github.com/fleetform/fleetform/internal/render"
	"github.com/fleetform/fleetform/internal/repourl"
)

// PlanReport is what a plan changes: the contract of `plan -o json` (and the plan part of
// `apply -o json`), and the body of fleetform's pull requests (WriteMarkdown).
type PlanReport struct {
	Environment          string                    `json:"environment"`
	Target               TargetReport              `json:"target"`
	Base                 string                    `json:"base"`
	Changes              []ChangeReport            `json:"changes"`
	AssignmentsAdded     []gitops.AssignmentRef    `json:"assignmentsAdded"`
	AssignmentsRemoved   []gitops.AssignmentRef    `json:"assignmentsRemoved"`
	ClusterTypesAffected []string                  `json:"clusterTypesAffected"`
	Deferred             []string                  `json:"deferred"`
	Failed               []gitops.FailedAssignment `json:"failed"`
	Rendered             int                       `json:"rendered"`
	Skipped              int                       `json:"skipped"`
	MassDelete           *gitops.MassDelete        `json:"massDelete"`
	// Pinned lists the assignments whose manifests a pin of the environment holds.
	Pinned []PinnedReport `json:"pinned"`
	// Waiting lists the assignments waiting for platform configuration (configSchemaPolicy:
	// warn): written without their platform config, which keeps its last valid version.
	// Absent when there is none.
	Waiting []WaitingReport `json:"waiting,omitempty"`
	controlplane.DiagnosticReport
}

// WaitingReport is an assignment waiting for platform configuration, with the schema
// problems (missing or invalid keys) of its composed config.
type WaitingReport struct {
	Workload         string   `json:"workload"`
	DeploymentTarget string   `json:"deploymentTarget"`
	ClusterType      string   `json:"clusterType"`
	Problems         []string `json:"problems"`
}

// PinnedReport is an assignment whose manifests a pin of the environment holds.
type PinnedReport struct {
	DeploymentTarget string            `json:"deploymentTarget"`
	ClusterType      string            `json:"clusterType"`
	Manifests        map[string]string `json:"manifests"`
	Reason           string            `json:"reason,omitempty"`
}

// TargetReport is where the tree goes.
type TargetReport struct {
	Repo   string `json:"repo"`
	Branch string `json:"branch"`
	Path   string `json:"path"`
}

// ChangeReport is one file the plan adds, modifies or deletes.
type ChangeReport struct {
	Path   string `json:"path"`
	Action string `json:"action"`
	Diff   string `json:"diff,omitempty"`
}

// Report describes a plan of run.
func Report(p *gitops.Plan, r *Run, withDiff bool) PlanReport {
	diagnostics := r.DiagnosticsWith(p.Output)
	doc := PlanReport{
		Environment: p.Environment, Target: TargetReport{Branch: p.Target.Branch, Path: p.Target.Path},
		Changes: make([]ChangeReport, 0, len(p.Changes)), AssignmentsAdded: nonNil(p.AssignmentsAdded), AssignmentsRemoved: nonNil(p.AssignmentsRemoved),
		ClusterTypesAffected: nonNil(p.ClusterTypesAffected), Deferred: nonNil(p.Deferred), Failed: nonNil(p.Failed),
		Rendered: p.Rendered, Skipped: p.Skipped, MassDelete: p.MassDelete,
	}
	if !p.Base.IsZero() {
		doc.Base = p.Base.String()
	}
	doc.Pinned = []PinnedReport{}
	for i := range p.Output.Assignments {
		a := &p.Output.Assignments[i]
		if len(a.Waiting) > 0 {
			w := WaitingReport{Workload: a.Workload, DeploymentTarget: a.DeploymentTarget, ClusterType: a.ClusterType}
			for _, d := range a.Waiting {
				w.Problems = append(w.Problems, strings.TrimPrefix(d.Message, render.WaitingPrefix))
			}
			doc.Waiting = append(doc.Waiting, w)
		}
		if a.Pinned != nil {
			doc.Pinned = append(doc.Pinned, PinnedReport{DeploymentTarget: a.DeploymentTarget, ClusterType: a.ClusterType,
				Manifests: a.Pinned.Manifests, Reason: a.Pinned.Reason})
		}
	}
	for _, c := range p.Changes {
		cj := ChangeReport{Path: c.Path, Action: c.Action}
		if withDiff {
			cj.Diff = udiff.Unified("a/"+c.Path, "b/"+c.Path, string(c.Old), string(c.New))
		}
		doc.Changes = append(doc.Changes, cj)
	}
	doc.DiagnosticReport = controlplane.SplitDiagnostics(diagnostics)
	doc.Target.Repo = repourl.Redact(p.Target.Repo)
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

// WriteMarkdown writes the plan as Markdown: a summary table first, then the files, then
// diffs (sized for a pull request or its comment).
func WriteMarkdown(w io.Writer, doc *PlanReport, withDiff bool) error {
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
	fmt.Fprintf(w, "| cluster types affected | %s |\n", ListOrNone(doc.ClusterTypesAffected))
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

// ListOrNone lists names for people: "none", or the first 20 and how many more.
func ListOrNone(s []string) string {
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
