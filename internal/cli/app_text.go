package cli

import (
	"fmt"
	"io"

	"github.com/fleetform/fleetform/internal/app"
)

// maxUnchangedListed is how many unchanged targets the text output lists one by one; more
// are counted.
const maxUnchangedListed = 10

// appText prints a result as text: one line per target, then the commits and pull requests.
func appText(w io.Writer, verb string, res *app.Result) error {
	version := res.Version
	if version == "" {
		version = "(no version)"
	}
	fmt.Fprintf(w, "%s %s %s in %s (config: %s shape)\n", verb, res.Workload, version, res.Environment, res.ConfigShape)
	unchanged := 0
	for _, t := range res.Targets {
		if t.Status == app.StatusUnchanged {
			unchanged++
		}
	}
	for _, t := range res.Targets {
		switch t.Status {
		case app.StatusFailed:
			fmt.Fprintf(w, "  %-20s failed\n", t.Target)
		case app.StatusUnchanged:
			if unchanged <= maxUnchangedListed {
				fmt.Fprintf(w, "  %-20s unchanged  %s:%s/\n", t.Target, t.Branch, t.Path)
			}
		default:
			fmt.Fprintf(w, "  %-20s %d file(s)  %s:%s/\n", t.Target, len(t.Changes), t.Branch, t.Path)
			for _, c := range t.Changes {
				fmt.Fprintf(w, "    %-6s %s\n", c.Action, c.Path)
			}
		}
		for _, k := range t.Kept {
			fmt.Fprintf(w, "    kept   %s/%s (its random values are the folder's; --regenerate for new ones)\n", t.Path, k)
		}
	}
	if unchanged > maxUnchangedListed {
		fmt.Fprintf(w, "  %d target(s) unchanged\n", unchanged)
	}
	for _, b := range res.Branches {
		if b.Commit != "" {
			fmt.Fprintf(w, "committed %s to %s (%v)\n", b.Commit[:min(len(b.Commit), 12)], orBranch(b), b.Targets)
		}
		if pr := b.PullRequest; pr != nil {
			what := "opened"
			if pr.Updated {
				what = "updated"
			}
			fmt.Fprintf(w, "pull request #%d into %s %s: %s\n", pr.Number, pr.Base, what, pr.URL)
		}
	}
	for _, warning := range res.Warnings {
		fmt.Fprintln(w, "warning:", warning)
	}
	if res.NoChange {
		fmt.Fprintln(w, "no change")
	}
	return nil
}

func orBranch(b app.BranchResult) string {
	if b.Head != "" {
		return b.Head
	}
	return b.Branch
}
