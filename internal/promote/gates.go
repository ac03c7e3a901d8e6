package promote

import (
	"fmt"
	"strings"
	"time"

	"github.com/fleetform/fleetform/internal/hub"
)

// Evidence is what the gates of a promotion are checked against.
type Evidence struct {
	// Commit is the control-plane commit to promote.
	Commit string
	// SourcePin is the commit the source environment is pinned to.
	SourcePin string
	// SourceGitOpsCommit is the Promoted_Commit_Id on the source environment's GitOps branch.
	SourceGitOpsCommit string
	// Rollout is the source environment's rollout at its latest desired revision (nil when
	// the hub has none).
	Rollout *hub.Rollout
	// DesiredCommit is the control-plane commit that revision was rendered from ("" when
	// the hub does not know).
	DesiredCommit string
	// DesiredPostedAt is when the revision was posted; LastChange is the latest state
	// change of the source environment's clusters since.
	DesiredPostedAt, LastChange time.Time
	// Approved is set when the commit was approved for the target environment (as many
	// times as the gates need, by distinct identities).
	Approved bool
	// Approvers name the distinct identities that approved it, when the gates need more than
	// one approval or four-eyes.
	Approvers []string
	Now       time.Time
}

// Check returns one human sentence per unmet gate; none means the commit may be promoted.
// A first environment (no source) is only subject to its freeze windows.
func Check(g Gates, ev Evidence) []string {
	reasons := []string{}
	if w, frozen := Active(g.Freeze, ev.Now); frozen {
		reasons = append(reasons, fmt.Sprintf("%s is frozen until %s: %s", g.Environment, w.Until(ev.Now), w.Reason))
	}
	if g.From != "" {
		reasons = append(reasons, checkSource(g, ev)...)
	}
	switch {
	case !g.Approval || ev.Approved:
	case g.FourEyes():
		reasons = append(reasons, fmt.Sprintf("%s requires %d approval(s) of commit %s from distinct identities%s, has %d%s: fleetform approve --env %s --commit %s",
			g.Environment, g.Approvals, short(ev.Commit), orEmpty(g.DistinctFromAuthor, " other than its author"), len(ev.Approvers),
			approvedBy(ev.Approvers), g.Environment, ev.Commit))
	default:
		reasons = append(reasons, fmt.Sprintf("%s requires an approval of commit %s: fleetform approve --env %s --commit %s",
			g.Environment, short(ev.Commit), g.Environment, ev.Commit))
	}
	return reasons
}

// FourEyes reports whether the approval gate counts approvers: more than one approval, or
// none by the author of the change.
func (g Gates) FourEyes() bool { return g.Approval && (g.Approvals > 1 || g.DistinctFromAuthor) }

func orEmpty(b bool, s string) string {
	if b {
		return s
	}
	return ""
}

func approvedBy(names []string) string {
	if len(names) == 0 {
		return ""
	}
	return " (" + strings.Join(names, ", ") + ")"
}

// checkSource checks the source environment: pinned to the commit, applied, compliant, soaked.
func checkSource(g Gates, ev Evidence) []string {
	var reasons []string
	src := g.From
	if ev.SourcePin != ev.Commit {
		reasons = append(reasons, fmt.Sprintf("%s is pinned to commit %s, not %s: promote %s into %s first",
			src, orNone(short(ev.SourcePin)), short(ev.Commit), short(ev.Commit), src))
	}
	if ev.SourceGitOpsCommit != ev.Commit {
		reasons = append(reasons, fmt.Sprintf("%s's GitOps branch carries commit %s, not %s: apply %s first",
			src, orNone(short(ev.SourceGitOpsCommit)), short(ev.Commit), src))
	}
	switch {
	case ev.Rollout == nil:
		return append(reasons, fmt.Sprintf("%s: the hub has no desired state (fleetform apply --hub posts it)", src))
	case ev.DesiredCommit != "" && ev.DesiredCommit != ev.Commit:
		return append(reasons, fmt.Sprintf("%s: the hub's latest desired revision %s was rendered from commit %s, not %s",
			src, short(ev.Rollout.Revision), short(ev.DesiredCommit), short(ev.Commit)))
	}
	if r := compliance(g, *ev.Rollout); r != "" {
		// Not compliant: the soak has not started (saying for how long it was compliant
		// would contradict this reason).
		if g.Soak > 0 {
			r += fmt.Sprintf("; the %s soak starts once it is compliant", g.Soak)
		}
		return append(reasons, r)
	}
	if g.Soak > 0 {
		since := ev.DesiredPostedAt
		if ev.LastChange.After(since) {
			since = ev.LastChange
		}
		if held := ev.Now.Sub(since); held < g.Soak {
			reasons = append(reasons, fmt.Sprintf("%s: unchanged and compliant for %s of the %s soak at revision %s",
				src, held.Truncate(time.Second), g.Soak, short(ev.Rollout.Revision)))
		}
	}
	return reasons
}

// compliance checks that every target has at least MinCompliantPercent of its cluster
// type's clusters compliant; targets on cluster types without clusters do not count, but
// an environment without clusters cannot prove anything.
func compliance(g Gates, r hub.Rollout) string {
	worst, failing, total := hub.TargetRollout{}, 0, 0
	worstRatio := 2.0
	for _, t := range r.Targets {
		if t.Clusters == 0 {
			continue
		}
		total++
		ratio := float64(t.Compliant) / float64(t.Clusters)
		if ratio*100 < float64(g.MinCompliantPercent) {
			failing++
			if ratio < worstRatio {
				worst, worstRatio = t, ratio
			}
		}
	}
	switch {
	case total == 0 && g.MinCompliantPercent > 0:
		return fmt.Sprintf("%s: no cluster reports any deployment target at revision %s, %d%% required",
			g.From, short(r.Revision), g.MinCompliantPercent)
	case failing == 0:
		return ""
	}
	s := fmt.Sprintf("%s: %d of %d clusters compliant at revision %s, %d%% required (deployment target %s on %s",
		g.From, worst.Compliant, worst.Clusters, short(r.Revision), g.MinCompliantPercent, worst.DeploymentTarget, worst.ClusterType)
	if failing > 1 {
		s += fmt.Sprintf(", and %d more target(s) below the threshold", failing-1)
	}
	return s + ")"
}

func short(c string) string { return c[:min(len(c), 7)] }

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}
