package serve

import (
	"context"
	"slices"
	"time"

	"github.com/fleetform/fleetform/internal/controlplane"
	"github.com/fleetform/fleetform/internal/fleet"
	"github.com/fleetform/fleetform/internal/gitops"
	"github.com/fleetform/fleetform/internal/hub"
	"github.com/fleetform/fleetform/internal/pipeline"
	"github.com/fleetform/fleetform/internal/render"
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
	r, err := pipeline.Load(ctx, cp, env, pipeline.UpToSchedule, render.Options{})
	if err != nil {
		rec.Error = err.Error()
		return
	}
	rec.ControlPlaneCommit, rec.CommonCommit = r.Snapshot.Revisions.Environment, r.Snapshot.Revisions.Common
	if s.opts.Rights != nil {
		s.opts.Rights.SetEnvironment(env, fleet.Policy(r.Snapshot.AccessPolicies))
		s.opts.Rights.SetWorkspaces(env, workspaces(r.Snapshot.Workloads))
	}
	before := s.learn(env, factsOf(r.Snapshot, branch), r.Snapshot)
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
// are in the record's failed assignments and diagnostics, not a failed sync.
func (s *Service) apply(ctx context.Context, r *pipeline.Run, t gitops.Target, rec *hub.SyncRecord) {
	res, err := s.opts.Fleet.ApplyRun(context.WithoutCancel(ctx), r, t, fleet.ApplyRequest{PullRequest: s.opts.PullRequests})
	if res != nil {
		rec.NoChange, rec.FilesChanged, rec.GitOpsCommit = res.NoChange, len(res.Plan.Changes), res.Commit
		for _, f := range res.Plan.Failed {
			rec.Failed = append(rec.Failed, hub.FailedAssignment{ClusterType: f.ClusterType, DeploymentTarget: f.DeploymentTarget, Error: f.Error})
		}
		if res.PullRequest != nil {
			rec.PullRequest = res.PullRequest.URL
		}
	}
	if err != nil && !fleet.IsInvalid(err) {
		rec.Error = err.Error()
	}
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
// read before (nil: never loaded).
func (s *Service) learn(env string, f *envFacts, snap *controlplane.Snapshot) *envFacts {
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
	s.forgetUnread()
	return before
}

// forgetUnread drops the sources no environment reads any more (a registration removed or
// moved to another branch): they are not polled, listed or exported again. Called with
// s.mu held.
func (s *Service) forgetUnread() {
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
		}
	}
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
