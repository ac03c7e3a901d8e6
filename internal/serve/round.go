package serve

import (
	"context"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/fleetform/fleetform/internal/controlplane"
	"github.com/fleetform/fleetform/internal/hub"
	"github.com/fleetform/fleetform/internal/promote"
	"github.com/fleetform/fleetform/internal/repourl"
	"github.com/fleetform/fleetform/internal/ui"
)

// change is what a round found moved, and why each environment is synced.
type change struct {
	controlPlane *controlPlaneChange
	sources      map[string]string // key -> kind, for workload and base repositories
	woken        bool
	authored     bool // woken by a change made through serve (its authoring API or the UI)
	// before are the refs of the sources that moved, as the poll before found them.
	before map[string]map[string]string
}

// round polls the sources that are due (or woken by a webhook), syncs the environments
// the changes reach (every one at the first round) and promotes where the chain says so.
func (s *Service) round(ctx context.Context, woken map[string]bool) {
	c := s.poll(ctx, woken)
	s.mu.Lock()
	first := !s.started
	s.mu.Unlock()
	asked := s.asked(ctx, woken)
	moved := first || c.controlPlane != nil || len(c.sources) > 0 || len(asked) > 0
	if !moved && !s.watchDue() {
		return // nothing moved, no promotion round due: no work beyond the poll
	}
	cp, err := s.open(ctx)
	if err != nil {
		s.unsee(c)
		s.failSource(ctx, repourl.Key(s.controlPlane), err)
		return
	}
	envs, branches, err := s.served(ctx, cp)
	if err != nil {
		s.unsee(c)
		s.failSource(ctx, repourl.Key(s.controlPlane), err)
		return
	}
	if first || c.controlPlane != nil {
		s.readRights(ctx, cp)
	}
	s.forgetUnserved(envs)
	affected, trigger := s.affected(cp, c, envs, first)
	only := map[string]string{} // the environments synced although no change reaches them
	for env, why := range asked {
		if slices.Contains(envs, env) && !affected[env] {
			only[env] = why
		}
	}
	if !s.syncAll(ctx, cp, affected, trigger, only, branches, c) {
		return // stopped, or no longer leading: the next leader's first round syncs everything
	}
	if first {
		s.mu.Lock()
		s.started = true
		s.mu.Unlock()
		s.poll(ctx, nil) // the sources the environments named: their first poll
		s.mu.Lock()
		s.ready = true
		s.mu.Unlock()
	}
	if s.watcher != nil && ctx.Err() == nil && s.stillLeading(ctx) {
		s.mu.Lock()
		s.lastWatch = s.opts.Now()
		s.mu.Unlock()
		if _, err := s.watcher.Round(ctx); err != nil && ctx.Err() == nil {
			s.opts.Logger.WarnContext(ctx, "promotion round", "error", err.Error())
		}
	}
}

// watchEvery is the least time between two promotion rounds when nothing moved: the gates'
// facts (reports, a soak's time) change by themselves, but no faster than this matters.
const watchEvery = 10 * time.Second

// watchDue reports whether a promotion round is due although nothing moved: every
// interval, and at most every watchEvery.
func (s *Service) watchDue() bool {
	if s.watcher == nil {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.opts.Now().Sub(s.lastWatch) >= max(s.opts.Interval, watchEvery)
}

// asked returns the environments to sync although nothing they read moved, with the
// trigger of each: those whose last sync failed, once their retry is due (trigger poll),
// the refused mass deletions someone confirmed (trigger mass-deletion) and an
// administrator's "sync now" (trigger manual).
func (s *Service) asked(ctx context.Context, woken map[string]bool) map[string]string {
	out := map[string]string{}
	for _, env := range s.dueRetries() {
		out[env] = hub.TriggerPoll
	}
	for _, env := range s.confirmedMassDeletions(ctx) {
		out[env] = hub.TriggerMassDeletion
	}
	for key := range woken {
		if env, ok := strings.CutPrefix(key, syncKey); ok {
			out[env] = hub.TriggerManual
		}
	}
	return out
}

// forgetUnserved drops what serve remembers of the syncs of environments it no longer
// serves (removed from the control plane): their failures are not tried again.
func (s *Service) forgetUnserved(envs []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	maps.DeleteFunc(s.failing, func(env string, _ *failure) bool { return !slices.Contains(envs, env) })
	maps.DeleteFunc(s.refused, func(env string, _ *refusal) bool { return !slices.Contains(envs, env) })
}

// served lists the environments to serve (declared, and selected) and the control-plane
// branch each reads its own content from.
func (s *Service) served(ctx context.Context, cp *controlplane.ControlPlane) ([]string, map[string]string, error) {
	infos, _, err := cp.Environments(ctx)
	if err != nil {
		return nil, nil, err
	}
	var envs []string
	branches := map[string]string{}
	for _, info := range infos {
		if len(s.opts.Environments) > 0 && !slices.Contains(s.opts.Environments, info.Name) {
			continue
		}
		envs = append(envs, info.Name)
		branches[info.Name] = info.Name
		if info.Object != nil && info.Object.Spec.ControlPlane.Branch != "" {
			branches[info.Name] = info.Object.Spec.ControlPlane.Branch
		}
	}
	chain, _ := promote.NewChain(infos)
	if s.opts.Approvals != nil {
		rules := map[string]hub.ApprovalRule{}
		for name, g := range chain.Gates {
			rules[name] = hub.ApprovalRule{Count: g.Approvals, DistinctFromAuthor: g.DistinctFromAuthor}
		}
		s.opts.Approvals.Set(rules)
	}
	order := make([]ui.ChainLink, 0, len(chain.Order))
	for _, env := range chain.Order {
		order = append(order, ui.ChainLink{Env: env, From: chain.Gates[env].From})
	}
	s.mu.Lock()
	s.envs, s.order = envs, order
	s.mu.Unlock()
	return envs, branches, nil
}

// affected is every environment the round's changes reach, and what triggered them.
func (s *Service) affected(cp *controlplane.ControlPlane, c change, envs []string, first bool) (map[string]bool, string) {
	if first {
		return setOf(envs), hub.TriggerStart
	}
	trigger := hub.TriggerPoll
	switch {
	case c.woken && c.authored:
		trigger = hub.TriggerAuthoring
	case c.woken:
		trigger = hub.TriggerWebhook
	}
	s.mu.Lock()
	facts := maps.Clone(s.facts)
	s.mu.Unlock()
	out := map[string]bool{}
	if c.controlPlane != nil {
		maps.Copy(out, affectedByControlPlane(cp.Layout(), cp.MainBranch(), *c.controlPlane, envs, facts))
	}
	for key, kind := range c.sources {
		maps.Copy(out, affectedBySource(key, kind, envs, facts))
	}
	return out, trigger
}

// poll asks every due source (or every one woken; nil: only the never polled) where its
// branches point, and returns what moved.
func (s *Service) poll(ctx context.Context, woken map[string]bool) change {
	c := change{sources: map[string]string{}, authored: woken[authoredKey], before: map[string]map[string]string{}}
	now := s.opts.Now()
	for _, key := range s.dueSources(woken) {
		if ctx.Err() != nil {
			return c
		}
		s.mu.Lock()
		src := s.sources[key]
		s.mu.Unlock()
		refs, err := s.repos.Refs(ctx, src.url)
		s.opts.Metrics.polled(src.kind, err)
		if err != nil {
			s.failSource(ctx, key, err)
			continue
		}
		moved := src.changed(refs)
		if len(moved) > 0 && woken[repourl.Key(src.url)] {
			c.woken = true
		}
		s.mu.Lock()
		old := src.refs
		src.refs, src.polled, src.failures, src.lastErr = refs, true, 0, ""
		src.lastPoll, src.next = now, now.Add(s.opts.Interval)
		s.mu.Unlock()
		if len(moved) == 0 {
			s.putSource(ctx, key)
			continue
		}
		c.before[key] = old
		if src.kind == KindControlPlane {
			c.controlPlane = &controlPlaneChange{branches: moved, files: s.changedFiles(ctx, src, old, refs)}
		} else {
			c.sources[key] = src.kind
		}
		s.putSource(ctx, key)
	}
	return c
}

// unsee forgets what a round's poll found moved, when the round could not read the control
// plane to sync it: the next poll of each source finds the move again (the control plane's
// once its failure's wait is over), and syncs what it reaches.
func (s *Service) unsee(c change) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for key, refs := range c.before {
		if src := s.sources[key]; src != nil {
			src.refs = refs
		}
	}
}

// dueSources are the keys of the sources to poll now, sorted.
func (s *Service) dueSources(woken map[string]bool) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.opts.Now()
	var keys []string
	for key, src := range s.sources {
		switch {
		case woken == nil && !src.polled && src.failures == 0:
		case woken != nil && (woken[repourl.Key(src.url)] || !src.next.After(now)):
		default:
			continue
		}
		keys = append(keys, key)
	}
	sort.Strings(keys)
	return keys
}

// changedFiles lists the files that changed on the folder layout's tip (nil when unknown:
// a directory, or the Kalypso layout, where branches say it all).
func (s *Service) changedFiles(ctx context.Context, src *source, old, refs map[string]string) []string {
	tip := s.read.Ref
	if tip == "" {
		tip = "HEAD"
	}
	if old[tip] == "" || refs[tip] == "" || old[tip] == refs[tip] {
		return nil
	}
	repo, err := s.repos.Open(ctx, src.url)
	if err != nil {
		return nil
	}
	files, err := repo.ChangedFiles(old[tip], refs[tip])
	if err != nil {
		s.opts.Logger.DebugContext(ctx, "comparing commits", "source", repourl.Redact(src.url), "error", err.Error())
		return nil
	}
	return files
}

// failSource records a failed poll or read: the source waits longer each time.
func (s *Service) failSource(ctx context.Context, key string, err error) {
	s.mu.Lock()
	src := s.sources[key]
	if src == nil {
		s.mu.Unlock()
		return
	}
	now := s.opts.Now()
	msg := repourl.RedactText(err.Error()) // a library's message may quote a URL with its credentials
	src.failures++
	src.lastErr, src.lastPoll = msg, now
	src.next = now.Add(backoff(s.opts.Interval, src.failures))
	url, failures, next := src.url, src.failures, src.next
	s.mu.Unlock()
	s.opts.Logger.WarnContext(ctx, "source failed", "source", repourl.Redact(url), "failures", failures, "next_poll", next, "error", msg)
	s.putSource(ctx, key)
}

// sourceRecordEvery is how often a source whose state did not change is recorded in the hub
// anyway (its last poll's time): polling every second must not write every second.
const sourceRecordEvery = time.Minute

// putSource records a source's state in the hub: when it changed (a commit, an error, a
// sync), and at most every sourceRecordEvery for a poll that found nothing new.
func (s *Service) putSource(ctx context.Context, key string) {
	if s.opts.Hub == nil {
		return
	}
	s.mu.Lock()
	src := s.sources[key]
	if src == nil { // no environment reads it any more
		s.mu.Unlock()
		return
	}
	st := hub.SourceState{URL: shownURL(src.url), Branch: src.branch, Kind: src.kind, LastCommit: src.commit(),
		LastPoll: src.lastPoll, LastSync: src.lastSync, LastError: clip(src.lastErr, hub.MaxErrorLength), Failures: src.failures, NextPoll: src.next}
	last, same := src.recorded, src.recorded != nil
	if same {
		unchanged := *last
		unchanged.LastPoll, unchanged.NextPoll = st.LastPoll, st.NextPoll
		same = unchanged == st && st.LastPoll.Sub(last.LastPoll) < sourceRecordEvery
	}
	if !same {
		src.recorded = &st
	}
	s.mu.Unlock()
	s.opts.Metrics.source(st)
	if same {
		return
	}
	if err := s.opts.Hub.PutSource(context.WithoutCancel(ctx), st); err != nil {
		s.opts.Logger.WarnContext(ctx, "recording a source", "source", st.URL, "error", err.Error())
	}
}

// commit is the commit of the branch that matters (the control plane: its HEAD).
func (src *source) commit() string {
	names := src.watched(src.refs)
	if src.kind == KindControlPlane {
		if c, ok := src.refs["HEAD"]; ok {
			return c
		}
		if c, ok := src.refs[controlplane.DirRef]; ok {
			return c
		}
		return ""
	}
	return src.refs[names[0]]
}

func setOf(names []string) map[string]bool {
	out := make(map[string]bool, len(names))
	for _, n := range names {
		out[n] = true
	}
	return out
}
