package serve

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/fleetform/fleetform/internal/controlplane"
	"github.com/fleetform/fleetform/internal/fleet"
	"github.com/fleetform/fleetform/internal/gitops"
	"github.com/fleetform/fleetform/internal/hub"
	"github.com/fleetform/fleetform/internal/pipeline"
)

// syncAll syncs the affected environments one after the other (one failing never stops the
// others), then learns the sources they read. It stops between environments when ctx ends.
func (s *Service) syncAll(ctx context.Context, cp *controlplane.ControlPlane, affected map[string]bool, branches map[string]string, trigger string, c change) {
	envs := make([]string, 0, len(affected))
	for env := range affected {
		envs = append(envs, env)
	}
	slices.Sort(envs)
	for _, env := range envs {
		if ctx.Err() != nil {
			return
		}
		s.sync(ctx, cp, env, branches[env], trigger, c)
	}
}

// sync applies one environment, exactly as `fleetform apply` does, and records it. An apply
// once started is finished even when ctx ends (a stop waits for it).
func (s *Service) sync(ctx context.Context, cp *controlplane.ControlPlane, env, branch, trigger string, c change) {
	start := s.opts.Now()
	rec := hub.SyncRecord{Environment: env, Time: start, Trigger: trigger, Failed: []hub.FailedAssignment{}}
	skipped := false
	defer func() {
		if !skipped {
			rec.DurationMS = s.opts.Now().Sub(start).Milliseconds()
			s.record(ctx, rec)
		}
	}()
	r, err := pipeline.Scheduled(ctx, cp, env)
	if err != nil {
		rec.Error = err.Error()
		return
	}
	rec.ControlPlaneCommit, rec.CommonCommit = r.Snapshot.Revisions.Environment, r.Snapshot.Revisions.Common
	if s.opts.Rights != nil {
		s.opts.Rights.SetEnvironment(env, fleet.Policy(r.Snapshot.AccessPolicies))
		s.opts.Rights.SetWorkspaces(env, workspaces(r.Snapshot.Workloads))
	}
	before, forgotten := s.learn(env, factsOf(r.Snapshot, branch), r.Snapshot)
	s.forgetSources(ctx, forgotten)
	if !needed(before, s.factsOf(env), c) {
		skipped = true // read, but nothing it has changed: not a sync
		return
	}
	t, err := s.opts.Fleet.Target(r, gitops.Target{})
	if err != nil {
		rec.Error = err.Error()
		return
	}
	rec.GitOpsRepo, rec.Branch = shownURL(t.Repo), t.Branch
	s.apply(ctx, r, t, &rec)
}

// apply writes the environment and fills the record with what it did: errors in its input
// are in the record's failed assignments and diagnostics, not a failed sync. A mass deletion
// is refused unless someone confirmed it at this control-plane commit.
func (s *Service) apply(ctx context.Context, r *pipeline.Run, t gitops.Target, rec *hub.SyncRecord) {
	req := fleet.ApplyRequest{PullRequest: s.opts.PullRequests}
	req.Write.AllowMassDelete = s.massDeletionConfirmed(ctx, rec.Environment, rec.ControlPlaneCommit)
	res, err := s.opts.Fleet.ApplyRun(context.WithoutCancel(ctx), r, t, req)
	massDeletion := res != nil && res.Plan.MassDelete != nil && fleet.IsRefused(err)
	s.noteMassDeletion(rec, massDeletion)
	if res != nil {
		rec.NoChange, rec.FilesChanged, rec.GitOpsCommit = res.NoChange, len(res.Plan.Changes), res.Commit
		for _, f := range res.Plan.Failed {
			rec.Failed = append(rec.Failed, hub.FailedAssignment{ClusterType: f.ClusterType, DeploymentTarget: f.DeploymentTarget, Error: f.Error})
		}
		if res.PullRequest != nil {
			rec.PullRequest = res.PullRequest.URL
		}
	}
	switch {
	case massDeletion:
		rec.Error = massDeletionRefusal(rec, res.Plan.MassDelete)
	case err != nil && !fleet.IsInvalid(err):
		rec.Error = err.Error()
	}
}

// massDeletionRefusal says why a sync refused a mass deletion and how to confirm it.
func massDeletionRefusal(rec *hub.SyncRecord, m *gitops.MassDelete) string {
	return fmt.Sprintf("%sapplying control-plane commit %s would remove %d of %d deployment-target folders (more than %.0f%%): "+
		"an empty or unreachable source must not wipe a fleet. Check the control plane; if the deletion is intended, confirm it "+
		"on the environment's page of the web UI (or POST /api/v1/environments/%s/mass-deletion), which is recorded in the history",
		hub.MassDeletionRefused, rec.ControlPlaneCommit[:min(len(rec.ControlPlaneCommit), 12)], m.Removed, m.Owned, m.Threshold*100, rec.Environment)
}

// noteMassDeletion remembers whether the environment's sync refused a mass deletion, and at
// which control-plane commit.
func (s *Service) noteMassDeletion(rec *hub.SyncRecord, refused bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if refused {
		s.refused[rec.Environment] = rec.ControlPlaneCommit
	} else {
		delete(s.refused, rec.Environment)
	}
}

// massDeletionConfirmed reports whether env's sync refused a mass deletion at commit and
// someone confirmed it since.
func (s *Service) massDeletionConfirmed(ctx context.Context, env, commit string) bool {
	s.mu.Lock()
	refused := s.refused[env]
	s.mu.Unlock()
	if s.opts.Hub == nil || commit == "" || refused != commit {
		return false
	}
	ok, err := s.opts.Hub.MassDeletionConfirmed(ctx, env, commit)
	if err != nil {
		s.opts.Logger.WarnContext(ctx, "reading the confirmations of a mass deletion", "environment", env, "error", err.Error())
	}
	return ok
}

// confirmedMassDeletions returns the environments whose refused mass deletion someone
// confirmed: each round syncs them again.
func (s *Service) confirmedMassDeletions(ctx context.Context) map[string]bool {
	s.mu.Lock()
	refused := maps.Clone(s.refused)
	s.mu.Unlock()
	out := map[string]bool{}
	for env, commit := range refused {
		if s.massDeletionConfirmed(ctx, env, commit) {
			out[env] = true
		}
	}
	return out
}

// record keeps a sync in the hub, and marks the sources it read as synced.
func (s *Service) record(ctx context.Context, rec hub.SyncRecord) {
	s.opts.Metrics.synced(rec)
	if rec.Error != "" {
		s.opts.Logger.WarnContext(ctx, "sync failed", "environment", rec.Environment, "error", rec.Error)
	} else {
		s.opts.Logger.InfoContext(ctx, "synced", "environment", rec.Environment, "trigger", rec.Trigger,
			"commit", rec.GitOpsCommit, "files", rec.FilesChanged, "failed", len(rec.Failed), "ms", rec.DurationMS)
		s.markSynced(rec.Environment, rec.Time)
	}
	if s.opts.Hub != nil {
		if err := s.opts.Hub.RecordSync(context.WithoutCancel(ctx), fitted(rec)); err != nil {
			s.opts.Logger.WarnContext(ctx, "recording a sync", "environment", rec.Environment, "error", err.Error())
		}
	}
}

// fitted cuts a record to what the hub keeps: its texts and the number of failures.
func fitted(rec hub.SyncRecord) hub.SyncRecord {
	rec.Error = clip(rec.Error, hub.MaxErrorLength)
	if len(rec.Failed) > hub.MaxFailedAssignments {
		rec.Failed = rec.Failed[:hub.MaxFailedAssignments]
	}
	for i := range rec.Failed {
		rec.Failed[i].Error = clip(rec.Failed[i].Error, hub.MaxMessageLength)
	}
	return rec
}

// learn records what an environment reads, adds the sources it names, and returns what it
// read before (nil: never loaded) and the sources no environment reads any more.
func (s *Service) learn(env string, f *envFacts, snap *controlplane.Snapshot) (*envFacts, []*source) {
	s.mu.Lock()
	defer s.mu.Unlock()
	before := s.facts[env]
	s.facts[env] = f
	now := s.opts.Now()
	add := func(url, kind, branch string) {
		if key := sourceKey(url, branch); s.sources[key] == nil {
			s.sources[key] = &source{url: url, kind: kind, branch: branch, next: now}
		}
	}
	for _, reg := range snap.Registrations {
		add(reg.Spec.Workload.Repo, KindWorkload, reg.Spec.Workload.Branch)
	}
	for _, br := range snap.ExtraBaseRepos {
		add(br.Spec.Repo, KindBase, br.Spec.Branch)
	}
	return before, s.forgetUnread()
}

// forgetSources removes what the hub recorded of sources no environment reads any more.
func (s *Service) forgetSources(ctx context.Context, sources []*source) {
	if s.opts.Hub == nil {
		return
	}
	for _, src := range sources {
		if err := s.opts.Hub.ForgetSource(context.WithoutCancel(ctx), shownURL(src.url), src.branch); err != nil {
			s.opts.Logger.WarnContext(ctx, "forgetting a source", "source", shownURL(src.url), "error", err.Error())
		}
	}
}

// forgetUnread drops the sources no environment reads any more (a registration removed or
// moved to another branch), and returns them: they are not polled, listed or exported
// again. Called with s.mu held.
func (s *Service) forgetUnread() []*source {
	var forgotten []*source
	for key, src := range s.sources {
		if src.kind == KindControlPlane {
			continue
		}
		read := false
		for _, f := range s.facts {
			if f != nil && (len(f.workloads[key]) > 0 || f.bases[key]) {
				read = true
				break
			}
		}
		if !read {
			delete(s.sources, key)
			s.opts.Metrics.forget(shownURL(src.url), src.kind)
			forgotten = append(forgotten, src)
		}
	}
	return forgotten
}

func (s *Service) factsOf(env string) *envFacts {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.facts[env]
}

// needed reports whether an environment reached only by workload repositories has targets
// of theirs, before or now (one that has none needs no apply).
func needed(before, now *envFacts, c change) bool {
	if before == nil || c.controlPlane != nil || len(c.sources) == 0 {
		return true
	}
	for key, kind := range c.sources {
		if kind != KindWorkload {
			return true
		}
		for _, f := range []*envFacts{before, now} {
			for _, reg := range f.workloads[key] {
				if f.withTargets[reg] {
					return true
				}
			}
		}
	}
	return false
}

// markSynced records the last successful sync of the sources an environment reads.
func (s *Service) markSynced(env string, at time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f := s.facts[env]
	for key, src := range s.sources {
		if src.kind == KindControlPlane || (f != nil && (len(f.workloads[key]) > 0 || f.bases[key])) {
			src.lastSync = at
		}
	}
}

// applyPromoted applies an environment the watcher promoted.
func (s *Service) applyPromoted(ctx context.Context, cp *controlplane.ControlPlane, env string) error {
	_, branches, err := s.served(ctx, cp)
	if err != nil {
		return err
	}
	s.sync(ctx, cp, env, branches[env], hub.TriggerPromotion, change{})
	return nil
}

// workspaces maps each workload to its workspace.
func workspaces(wls []*controlplane.Workload) map[string]string {
	out := make(map[string]string, len(wls))
	for _, w := range wls {
		out[w.Metadata.Name] = w.Workspace
	}
	return out
}
