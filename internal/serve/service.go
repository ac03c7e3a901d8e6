package serve

import (
	"context"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/fleetform/fleetform/internal/controlplane"
	"github.com/fleetform/fleetform/internal/gitops"
	"github.com/fleetform/fleetform/internal/hub"
	"github.com/fleetform/fleetform/internal/pipeline"
	"github.com/fleetform/fleetform/internal/promote"
	"github.com/fleetform/fleetform/internal/render"
)

// LeaseName names serve's leadership in the store.
const LeaseName = "fleetform-serve"

// Hub is what serve tells the hub: the desired state of every apply, the state of every
// source and every environment's syncs (so that every replica can answer for them).
type Hub interface {
	pipeline.DesiredPoster
	PutSource(ctx context.Context, s hub.SourceState) error
	RecordSync(ctx context.Context, r hub.SyncRecord) error
}

// Options configure the service.
type Options struct {
	// ControlPlane is the control plane's location and Platform how it is read (repo map,
	// credentials, layout, the config file's GitOps repositories).
	ControlPlane string
	Platform     controlplane.Options
	// Environments are the environments served; empty: every one the control plane declares.
	Environments []string
	// Interval is how often every source is polled.
	Interval time.Duration
	Writer   *gitops.Writer
	Commit   gitops.CommitOptions
	// PullRequests, when set, gives the pull requests an environment's applies open
	// (as apply --pr) instead of moving its branch.
	PullRequests func(ctx context.Context, t gitops.Target, env string) (*pipeline.PullRequests, error)
	Hub          Hub
	// Leadership elects the replica that works; nil: this one always does.
	Leadership hub.Leadership
	// Promoter, when set, promotes the environments whose chain says automatic.
	Promoter *promote.Promoter
	Metrics  *Metrics
	Logger   *slog.Logger
	// Now is the clock (time.Now when nil).
	Now func() time.Time
}

// Service is a running `fleetform serve`.
type Service struct {
	opts    Options
	repos   *controlplane.Repos
	watcher *promote.Watcher
	wake    chan string // repository keys a webhook names

	mu      sync.Mutex
	sources map[string]*source // by repoKey
	facts   map[string]*envFacts
	envs    []string
	// order is the environments in promotion order (every one, served or not).
	order   []string
	started bool // the first round (a sync of every environment) is done
	ready   bool // and every source was polled once
	leading bool
	decided bool // this replica tried to lead once: it knows whether it leads
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
	s := &Service{opts: opts, repos: controlplane.NewRepos(opts.Platform.RepoMap, opts.Platform.Credentials, opts.Logger),
		wake: make(chan string, 64), sources: map[string]*source{}, facts: map[string]*envFacts{}}
	s.sources[repoKey(opts.ControlPlane)] = &source{url: opts.ControlPlane, kind: KindControlPlane, next: opts.Now()}
	if opts.Promoter != nil {
		s.watcher = &promote.Watcher{Promoter: opts.Promoter, Actor: "fleetform serve", Logger: opts.Logger, Now: opts.Now,
			Open: s.open, Apply: s.applyPromoted}
	}
	return s
}

// open reads the control plane afresh.
func (s *Service) open(ctx context.Context) (*controlplane.ControlPlane, error) {
	return controlplane.Open(ctx, s.opts.ControlPlane, s.opts.Platform)
}

// Schedule loads an environment of the control plane at its latest commits and schedules it
// (no render): what explain pages read.
func (s *Service) Schedule(ctx context.Context, env string) (*pipeline.Run, error) {
	cp, err := s.open(ctx)
	if err != nil {
		return nil, err
	}
	return pipeline.Load(ctx, cp, env, pipeline.UpToSchedule, render.Options{})
}

// Trigger asks for a sync of the repository a webhook named, at once; it reports whether
// the repository is one of the sources.
func (s *Service) Trigger(repoURL string) bool {
	key := repoKey(repoURL)
	s.mu.Lock()
	_, known := s.sources[key]
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
func (s *Service) Chain(context.Context) ([]string, error) {
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
	var lease hub.Lease
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
			woken[key] = true
		case <-time.After(s.untilNext()):
		}
	}
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
			return lease, nil
		} else if ctx.Err() == nil {
			s.opts.Logger.WarnContext(ctx, "lost the leadership", "error", err.Error())
		}
		s.setLeading(false)
	}
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
	s.setLeading(l != nil)
	return l, nil
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
	return max(next.Sub(s.opts.Now()), time.Millisecond)
}
