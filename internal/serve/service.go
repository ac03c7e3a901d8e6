package serve

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/fleetform/fleetform/internal/access"
	"github.com/fleetform/fleetform/internal/controlplane"
	"github.com/fleetform/fleetform/internal/fleet"
	"github.com/fleetform/fleetform/internal/hub"
	"github.com/fleetform/fleetform/internal/pipeline"
	"github.com/fleetform/fleetform/internal/promote"
	"github.com/fleetform/fleetform/internal/repourl"
	"github.com/fleetform/fleetform/internal/ui"
)

// LeaseName names serve's leadership in the store.
const LeaseName = "fleetform-serve"

// Hub is what serve tells the hub beside what its applies post there (the Fleet's hub):
// the state of every source and every environment's syncs (so that every replica can
// answer for them).
type Hub interface {
	PutSource(ctx context.Context, s hub.SourceState) error
	RecordSync(ctx context.Context, r hub.SyncRecord) error
	// ForgetSource removes a source no environment reads any more.
	ForgetSource(ctx context.Context, url, branch string) error
	// MassDeletionConfirmedSince reports whether someone confirmed the mass deletion of env
	// at control-plane commit (recorded through the UI or the API) at since or later.
	MassDeletionConfirmedSince(ctx context.Context, env, commit string, since time.Time) (bool, error)
}

// Options configure the service.
type Options struct {
	// Fleet is the control plane served, how it is read and written, and the hub its
	// applies post their desired state to.
	Fleet *fleet.Fleet
	// Environments are the environments served; empty: every one the control plane declares.
	Environments []string
	// Interval is how often every source is polled.
	Interval time.Duration
	// PullRequests makes an environment's applies open pull requests (as apply --pr)
	// instead of moving its branch.
	PullRequests bool
	Hub          Hub
	// Leadership elects the replica that works; nil: this one always does.
	Leadership hub.Leadership
	// Promote promotes the environments whose chain says automatic.
	Promote bool
	// Rights, when set, are kept up to date with the access policies: those at the tip of
	// the control plane whenever it moves, and those each environment loads.
	Rights *access.Rights
	// Approvals, when set, get the environments' four-eyes rules as the service reads them.
	Approvals *hub.ApprovalRules
	Metrics   *Metrics
	Logger    *slog.Logger
	// Now is the clock (time.Now when nil).
	Now func() time.Time
}

// Service is a running `fleetform serve`.
type Service struct {
	opts Options
	// controlPlane is the control plane's location and read how it is read (the Fleet's).
	controlPlane string
	read         controlplane.Options
	repos        *controlplane.Repos
	watcher      *promote.Watcher
	wake         chan string // repository keys a webhook names

	mu      sync.Mutex
	sources map[string]*source // by repoKey
	facts   map[string]*envFacts
	// refused are the environments whose last sync refused a mass deletion, with what it
	// refused: each round asks the hub whether someone confirmed it since.
	refused map[string]*refusal
	// failing are the environments whose last sync failed: synced again when due.
	failing map[string]*failure
	envs    []string
	// order is the environments in promotion order (every one, served or not).
	order   []ui.ChainLink
	started bool // the first round (a sync of every environment) is done
	ready   bool // and every source was polled once
	leading bool
	decided bool // this replica tried to lead once: it knows whether it leads
	// lease is the leadership Lead took, for Run.
	lease hub.Lease
	// held is the lease this replica leads with (nil: none): checked before every
	// environment's sync.
	held hub.Lease
	// lastWatch is when the last promotion round ran.
	lastWatch time.Time
}

// New returns a service; Run starts it.
func New(opts Options) *Service {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Interval <= 0 {
		opts.Interval = time.Minute
	}
	cfg := opts.Fleet.Config()
	s := &Service{opts: opts, controlPlane: cfg.ControlPlane, read: cfg.Read,
		repos: controlplane.NewRepos(cfg.Read.RepoMap, cfg.Credentials, opts.Logger),
		wake:  make(chan string, 64), sources: map[string]*source{}, facts: map[string]*envFacts{},
		refused: map[string]*refusal{}, failing: map[string]*failure{}}
	s.sources[repourl.Key(s.controlPlane)] = &source{url: s.controlPlane, kind: KindControlPlane, next: opts.Now()}
	if opts.Promote {
		s.watcher = opts.Fleet.Watcher("fleetform serve", opts.Now, s.applyPromoted)
	}
	return s
}

// readRights reads the access policies at the tip of the control plane. When they cannot be
// read, the ones read before stay in force.
func (s *Service) readRights(ctx context.Context, cp *controlplane.ControlPlane) {
	if s.opts.Rights == nil {
		return
	}
	policies, diags, err := cp.AccessPolicies(ctx)
	if err != nil {
		s.opts.Logger.WarnContext(ctx, "reading the access policies", "error", err.Error())
		return
	}
	for _, d := range diags {
		s.opts.Logger.WarnContext(ctx, "access policy left out", "problem", d.Error())
	}
	s.opts.Rights.SetTip(fleet.Policy(policies))
}

// open reads the control plane afresh.
func (s *Service) open(ctx context.Context) (*controlplane.ControlPlane, error) {
	return s.opts.Fleet.OpenControlPlane(ctx)
}

// Schedule loads an environment of the control plane at its latest commits and schedules it
// (no render): what explain pages read.
func (s *Service) Schedule(ctx context.Context, env string) (*pipeline.Run, error) {
	return s.opts.Fleet.Load(ctx, env, pipeline.UpToSchedule)
}

// wake adds what key wakes to woken: a source's key, and authoredKey for a change made
// through serve.
func wake(woken map[string]bool, key string) {
	if k, ok := strings.CutPrefix(key, authoredKey); ok {
		woken[authoredKey], key = true, k
	}
	woken[key] = true
}

// authoredKey marks a wake-up for a change made through serve itself; syncKey, followed by
// an environment's name, an administrator's "sync now".
const (
	authoredKey = "\x00authored\x00"
	syncKey     = "\x00sync\x00"
)

// ErrNotLeading is a "sync now" asked of a replica that does not lead: the leader syncs.
var ErrNotLeading = errors.New("this replica does not lead: the leading replica syncs at its next round (every --interval)")

// SyncNow asks for a sync of env at once, recorded with trigger "manual" (the web UI's
// "sync now"). Only the leading replica syncs: another one answers ErrNotLeading.
func (s *Service) SyncNow(env string) error {
	if !s.Leading() {
		return ErrNotLeading
	}
	select {
	case s.wake <- syncKey + env:
	default: // a round is already asked for; this one waits for the next interval
	}
	return nil
}

// Authored asks for a sync of the control plane after a change made through serve (its
// authoring API or the UI's forms): recorded with trigger "authoring".
func (s *Service) Authored() {
	select {
	case s.wake <- authoredKey + repourl.Key(s.controlPlane):
	default: // a sync is already asked for
	}
}

// Trigger asks for a sync of the repository a webhook named, at once; it reports whether
// the repository is one of the sources.
func (s *Service) Trigger(repoURL string) bool {
	key := repourl.Key(repoURL) // wakes the sources of the repository, at every branch read
	s.mu.Lock()
	known := false
	for _, src := range s.sources {
		known = known || repourl.Key(src.url) == key
	}
	s.mu.Unlock()
	if known {
		select {
		case s.wake <- key:
		default: // a sync is already asked for
		}
	}
	return known
}

// Chain lists the control plane's environments in promotion order, as read last (empty
// before the first round).
func (s *Service) Chain(context.Context) ([]ui.ChainLink, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.order), nil
}

// Ready reports whether this replica can take traffic: a follower once it knows it follows,
// the leader once it has synced every environment and polled every source once.
func (s *Service) Ready() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.decided && (!s.leading || s.ready)
}

// Leading reports whether this replica leads.
func (s *Service) Leading() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.leading
}

// Run works until ctx ends: as the leader, a round every time a source is due or a webhook
// asks; as a follower, a try to lead every interval. An apply in flight when ctx ends is
// finished first.
func (s *Service) Run(ctx context.Context) error {
	s.mu.Lock()
	lease := s.lease
	s.lease = nil
	s.mu.Unlock()
	defer func() {
		if lease != nil {
			_ = lease.Release(context.WithoutCancel(ctx))
		}
	}()
	woken := map[string]bool{}
	for {
		var err error
		if lease, err = s.lead(ctx, lease); err != nil {
			return err
		}
		if s.Leading() {
			s.round(ctx, woken)
			woken = map[string]bool{}
		}
		select {
		case <-ctx.Done():
			return nil
		case key := <-s.wake:
			wake(woken, key)
		case <-time.After(s.untilNext()):
		}
	}
}

// Lead tries to take the leadership before Run: a store that allows one process only (SQLite)
// refuses a second process here, before it serves anything. A follower of a shared store is
// no error (Run keeps trying).
func (s *Service) Lead(ctx context.Context) error {
	lease, err := s.lead(ctx, nil)
	s.mu.Lock()
	s.lease = lease
	s.mu.Unlock()
	return err
}

// lead keeps or takes the leadership: a held lease is checked before every round (a lost
// database connection loses it), and a follower tries to take it.
func (s *Service) lead(ctx context.Context, lease hub.Lease) (hub.Lease, error) {
	if s.opts.Leadership == nil {
		s.setLeading(true)
		return nil, nil
	}
	if lease != nil {
		if err := lease.Check(ctx); err == nil {
			s.hold(lease)
			return lease, nil
		} else if ctx.Err() == nil && s.Leading() { // a round that found it lost said so already
			s.opts.Logger.WarnContext(ctx, "lost the leadership", "error", err.Error())
		}
		s.setLeading(false)
	}
	s.hold(nil)
	l, err := s.opts.Leadership.TryLead(ctx, LeaseName)
	if ctx.Err() != nil {
		return nil, nil //nolint:nilerr // stopping: Run ends at its next wait
	}
	if err != nil {
		return nil, err
	}
	if l != nil {
		s.opts.Logger.InfoContext(ctx, "leading: polling, applying and promoting")
	}
	s.hold(l)
	s.setLeading(l != nil)
	return l, nil
}

func (s *Service) hold(l hub.Lease) {
	s.mu.Lock()
	s.held = l
	s.mu.Unlock()
}

// errLostLeadership stops a round whose leader lost its lease.
var errLostLeadership = errors.New("this replica lost the leadership: it writes no more")

// stillLeading checks the lease before a write (an environment's sync, a promotion round):
// a leader that lost it (its database session ended) stops, since another replica may
// lead and write now.
func (s *Service) stillLeading(ctx context.Context) bool {
	if s.opts.Leadership == nil {
		return true
	}
	s.mu.Lock()
	l := s.held
	s.mu.Unlock()
	if l == nil {
		return false
	}
	if err := l.Check(ctx); err != nil {
		if ctx.Err() == nil {
			s.opts.Logger.WarnContext(ctx, "lost the leadership: the round stops", "error", err.Error())
		}
		s.hold(nil)
		s.setLeading(false)
		return false
	}
	return true
}

func (s *Service) setLeading(on bool) {
	s.mu.Lock()
	s.decided = true
	if s.leading && !on {
		s.started, s.ready = false, false // a new leader starts with a full sync
	}
	s.leading = on
	s.mu.Unlock()
	s.opts.Metrics.leader(on)
}

// untilNext is how long to wait for the next due source (a follower: one interval).
func (s *Service) untilNext() time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.leading {
		return s.opts.Interval
	}
	next := s.opts.Now().Add(s.opts.Interval)
	for _, src := range s.sources {
		if src.next.Before(next) {
			next = src.next
		}
	}
	for _, f := range s.failing {
		if f.next.Before(next) {
			next = f.next
		}
	}
	return max(next.Sub(s.opts.Now()), time.Millisecond)
}
