package serve

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/fleetform/fleetform/internal/controlplane"
	"github.com/fleetform/fleetform/internal/fleet"
	"github.com/fleetform/fleetform/internal/gitops"
	"github.com/fleetform/fleetform/internal/hub"
	"github.com/fleetform/fleetform/internal/pipeline"
	"github.com/fleetform/fleetform/internal/render"
)

// syncAll syncs the affected environments (with the round's trigger) and those synced
// although no change reaches them (only, with their own trigger) one after the other: one
// failing never stops the others. It stops between environments when ctx ends or this
// replica no longer leads, and then returns false.
func (s *Service) syncAll(ctx context.Context, cp *controlplane.ControlPlane, affected map[string]bool, trigger string, only map[string]string,
	branches map[string]string, c change) bool {
	envs := make([]string, 0, len(affected)+len(only))
	for env := range affected {
		envs = append(envs, env)
	}
	for env := range only {
		envs = append(envs, env)
	}
	slices.Sort(envs)
	for _, env := range slices.Compact(envs) {
		if ctx.Err() != nil || !s.stillLeading(ctx) {
			return false
		}
		if affected[env] {
			s.sync(ctx, cp, env, branches[env], trigger, c)
		} else {
			s.sync(ctx, cp, env, branches[env], only[env], change{}) // no change to weigh: synced
		}
	}
	return ctx.Err() == nil
}

// sync applies one environment, exactly as `fleetform apply` does, and records it. An apply
// once started is finished even when ctx ends (a stop waits for it). A sync that fails is
// tried again later (see retryLater).
func (s *Service) sync(ctx context.Context, cp *controlplane.ControlPlane, env, branch, trigger string, c change) {
	start := s.opts.Now()
	rec := hub.SyncRecord{Environment: env, Time: start, Trigger: trigger, Failed: []hub.FailedAssignment{}}
	skipped := false
	defer func() {
		if !skipped {
			rec.DurationMS = s.opts.Now().Sub(start).Milliseconds()
			s.record(ctx, rec, s.retryLater(rec))
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

// failure is an environment whose last sync failed (the GitOps repository unreachable, a
// push that kept conflicting, a control plane that could not be read): nothing it reads may
// move again for long, so it is synced again at next, waiting longer each time, as a
// failing source does.
type failure struct {
	failures int
	next     time.Time
}

// retryLater remembers when to sync an environment again after its sync failed, and
// forgets it after one that did not (a refused mass deletion waits for a confirmation, not
// for time). It returns the failure (nil: none).
func (s *Service) retryLater(rec hub.SyncRecord) *failure {
	s.mu.Lock()
	defer s.mu.Unlock()
	if rec.Error == "" || strings.HasPrefix(rec.Error, hub.MassDeletionRefused) {
		delete(s.failing, rec.Environment)
		return nil
	}
	f := s.failing[rec.Environment]
	if f == nil {
		f = &failure{}
		s.failing[rec.Environment] = f
	}
	f.failures++
	f.next = s.opts.Now().Add(backoff(s.opts.Interval, f.failures))
	return &failure{failures: f.failures, next: f.next}
}

// dueRetries are the environments whose failed sync is due to be tried again.
func (s *Service) dueRetries() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.opts.Now()
	var out []string
	for env, f := range s.failing {
		if !f.next.After(now) {
			out = append(out, env)
		}
	}
	return out
}

// apply writes the environment and fills the record with what it did: errors in its input
// are in the record's failed assignments and diagnostics, not a failed sync. A mass deletion
// is refused unless someone confirmed the refusal of it (see massDeletionConfirmed).
func (s *Service) apply(ctx context.Context, r *pipeline.Run, t gitops.Target, rec *hub.SyncRecord) {
	req := fleet.ApplyRequest{PullRequest: s.opts.PullRequests}
	res, err := s.opts.Fleet.ApplyRun(context.WithoutCancel(ctx), r, t, req)
	var refused map[string]bool // the folders of a mass deletion refused
	if res != nil && res.Plan.MassDelete != nil && fleet.IsRefused(err) {
		refused = removedFolders(res.Plan)
		if s.massDeletionConfirmed(ctx, rec.Environment, rec.ControlPlaneCommit, refused) {
			req.Write.AllowMassDelete = true
			res, err = s.opts.Fleet.ApplyRun(context.WithoutCancel(ctx), r, t, req)
			refused = nil
		}
	}
	s.noteMassDeletion(rec, refused, res != nil)
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
	case refused != nil:
		rec.Error = massDeletionRefusal(rec, res.Plan.MassDelete, refused)
	case err != nil && !fleet.IsInvalid(err):
		rec.Error = err.Error()
	}
}

// removedFolders are the folders a plan removes: the deployment-target folder
// (CLUSTERTYPE/TARGET) of every assignment it removes, and the folder (CLUSTERTYPE/) of
// every cluster type it removes.
func removedFolders(p pipeline.PlanReport) map[string]bool {
	out := map[string]bool{}
	for _, a := range p.AssignmentsRemoved {
		out[a.ClusterType+"/"+a.DeploymentTarget] = true
	}
	for _, c := range p.Changes {
		if ct, ok := strings.CutSuffix(c.Path, "/"+render.ReadmeFile); ok && c.Action == "delete" && !strings.Contains(ct, "/") {
			out[ct+"/"] = true
		}
	}
	return out
}

// maxFoldersNamed bounds the folders a refusal names.
const maxFoldersNamed = 10

// massDeletionRefusal says why a sync refused a mass deletion, what it would remove, and how
// to confirm it.
func massDeletionRefusal(rec *hub.SyncRecord, m *gitops.MassDelete, folders map[string]bool) string {
	names := slices.Sorted(maps.Keys(folders))
	named := strings.Join(names[:min(len(names), maxFoldersNamed)], ", ")
	if n := len(names) - maxFoldersNamed; n > 0 {
		named += fmt.Sprintf(" and %d more", n)
	}
	return fmt.Sprintf("%sapplying control-plane commit %s would remove %d of %d deployment-target folders (more than %.0f%%: %s): "+
		"an empty or unreachable source must not wipe a fleet. Check the control plane; if the deletion is intended, confirm it "+
		"on the environment's page of the web UI (or POST /api/v1/environments/%s/mass-deletion), which is recorded in the history",
		hub.MassDeletionRefused, rec.ControlPlaneCommit[:min(len(rec.ControlPlaneCommit), 12)], m.Removed, m.Owned, m.Threshold*100, named, rec.Environment)
}

// refusal is a mass deletion an environment's sync refused: the control-plane commit, the
// folders it would remove, and when the sync that first refused it started. A confirmation
// answers it only when it was given since, and only for a deletion of these folders or fewer.
type refusal struct {
	commit  string
	folders map[string]bool
	at      time.Time
}

// noteMassDeletion remembers the mass deletion an environment's sync refused (folders; nil:
// none). A refusal of the same commit that removes no other folders keeps the first one's
// time, with its own folders: a confirmation given in between answers it (it confirmed
// more). Once a plan was applied (planned: a plan was made and not refused) the refusal is
// forgotten; a sync that failed before it keeps it, for the retry.
func (s *Service) noteMassDeletion(rec *hub.SyncRecord, folders map[string]bool, planned bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch old := s.refused[rec.Environment]; {
	case folders != nil && old != nil && old.commit == rec.ControlPlaneCommit && subset(folders, old.folders):
		s.refused[rec.Environment] = &refusal{commit: old.commit, folders: folders, at: old.at}
	case folders != nil:
		s.refused[rec.Environment] = &refusal{commit: rec.ControlPlaneCommit, folders: folders, at: rec.Time}
	case planned:
		delete(s.refused, rec.Environment)
	}
}

// subset reports whether every key of a is in b.
func subset(a, b map[string]bool) bool {
	for k := range a {
		if !b[k] {
			return false
		}
	}
	return true
}

// massDeletionConfirmed reports whether a mass deletion of folders from env at commit may be
// applied: env's sync refused one at that commit, which removed every one of these folders
// (a plan that removes any other is refused again), and someone confirmed it since.
func (s *Service) massDeletionConfirmed(ctx context.Context, env, commit string, folders map[string]bool) bool {
	s.mu.Lock()
	r := s.refused[env]
	s.mu.Unlock()
	return r != nil && r.commit == commit && subset(folders, r.folders) && s.confirmedSince(ctx, env, r)
}

// confirmedSince asks the hub whether someone confirmed a refusal since it was made.
func (s *Service) confirmedSince(ctx context.Context, env string, r *refusal) bool {
	if s.opts.Hub == nil || r.commit == "" {
		return false
	}
	ok, err := s.opts.Hub.MassDeletionConfirmedSince(ctx, env, r.commit, r.at)
	if err != nil {
		s.opts.Logger.WarnContext(ctx, "reading the confirmations of a mass deletion", "environment", env, "error", err.Error())
	}
	return ok
}

// confirmedMassDeletions returns the environments whose refused mass deletion someone
// confirmed since: each round syncs them again (one whose sync failed since waits for its
// retry).
func (s *Service) confirmedMassDeletions(ctx context.Context) []string {
	s.mu.Lock()
	now := s.opts.Now()
	refused := map[string]*refusal{}
	for env, r := range s.refused {
		if f := s.failing[env]; f == nil || !f.next.After(now) {
			refused[env] = r
		}
	}
	s.mu.Unlock()
	var out []string
	for env, r := range refused {
		if s.confirmedSince(ctx, env, r) {
			out = append(out, env)
		}
	}
	return out
}

// record keeps a sync in the hub, and marks the sources it read as synced; retry is when a
// failed sync is tried again (nil: it is not).
func (s *Service) record(ctx context.Context, rec hub.SyncRecord, retry *failure) {
	s.opts.Metrics.synced(rec)
	switch {
	case retry != nil:
		s.opts.Logger.WarnContext(ctx, "sync failed", "environment", rec.Environment, "failures", retry.failures,
			"next_try", retry.next, "error", rec.Error)
	case rec.Error != "":
		s.opts.Logger.WarnContext(ctx, "sync refused", "environment", rec.Environment, "error", rec.Error)
	default:
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
	if !s.stillLeading(ctx) {
		return errLostLeadership
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
