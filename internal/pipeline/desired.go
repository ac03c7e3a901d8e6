package pipeline

import (
	"context"
	"fmt"
	"strings"

	"github.com/fleetform/fleetform/internal/compose"
	"github.com/fleetform/fleetform/internal/gitops"
	"github.com/fleetform/fleetform/internal/hub"
	"github.com/fleetform/fleetform/internal/render"
	"github.com/fleetform/fleetform/internal/repourl"
)

// DesiredPoster receives the desired state of an apply: the hub itself, or its client.
type DesiredPoster interface {
	PostDesired(ctx context.Context, d hub.Desired) error
}

// PostDesired tells the hub what an apply scheduled, at the GitOps revision it wrote (or,
// when nothing changed, the branch tip it found up to date). When nothing changed and
// assignments failed (their folders kept as the tip has them), the hub may already hold the
// tip's desired state with what those folders configure: that record stands, and its
// conflict with this apply's (which cannot say what a failed assignment configures) is no
// error: the assignments' own errors are the apply's outcome.
func PostDesired(ctx context.Context, h DesiredPoster, r *Run, res *gitops.Result) error {
	if res == nil || res.Plan == nil {
		return nil
	}
	d := Desired(r, res)
	if d.Revision == "" {
		return nil // an empty branch with nothing to write: nothing is scheduled anywhere
	}
	err := h.PostDesired(ctx, d)
	if err != nil && res.Commit.IsZero() && len(res.Plan.Failed) > 0 && hub.ErrorCode(err) == hub.CodeConflict {
		return nil
	}
	if err != nil {
		return fmt.Errorf("post the desired state of %s at %s to the hub: %w", d.Environment, d.Revision[:min(len(d.Revision), 12)], err)
	}
	return nil
}

// Desired is what an apply scheduled: every assignment with its manifests and composed
// configuration, at the commit written, with the control-plane commit the common content
// was rendered from.
func Desired(r *Run, res *gitops.Result) hub.Desired {
	p := res.Plan
	d := hub.Desired{Environment: r.Snapshot.Environment, GitOpsRepo: repourl.Redact(p.Target.Repo), Branch: res.Branch,
		Assignments: []hub.DesiredAssignment{}}
	switch {
	case !res.Commit.IsZero():
		d.Revision = res.Commit.String()
	case !p.Base.IsZero():
		d.Revision = p.Base.String()
	}
	if d.Branch == "" {
		d.Branch = p.Target.Branch
	}
	configs := map[string]map[string]any{}
	waiting := map[string][]string{}
	if p.Output != nil {
		d.PromotedCommit = p.Output.CommonCommit
		var composer *compose.Composer // for the cluster types the apply had no need to compose
		for _, a := range p.Output.Assignments {
			switch {
			case a.Config != nil:
				configs[a.ClusterType+"/"+a.DeploymentTarget] = a.Config.Data
			case a.Err == nil && a.Type != nil && a.Target != nil:
				if composer == nil {
					composer = compose.New(r.Snapshot)
				}
				configs[a.ClusterType+"/"+a.DeploymentTarget] = composer.Compose(a.Type, a.Target).Data
			}
			for _, w := range a.Waiting {
				waiting[a.Dir()] = append(waiting[a.Dir()], strings.TrimPrefix(w.Message, render.WaitingPrefix))
			}
		}
	}
	if d.PromotedCommit == "" {
		d.PromotedCommit = r.Snapshot.Revisions.Common
	}
	for _, a := range r.Schedule.Assignments {
		d.Assignments = append(d.Assignments, hub.DesiredAssignment{Workload: a.Workload, DeploymentTarget: a.DeploymentTarget,
			ClusterType: a.ClusterType, Namespace: a.Namespace, Manifests: a.Manifests,
			Config: configs[a.ClusterType+"/"+a.DeploymentTarget], Waiting: waiting[a.ClusterType+"/"+a.DeploymentTarget]})
	}
	return d
}
