package agent

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/fleetform/fleetform/internal/hub"
	"github.com/fleetform/fleetform/internal/hub/client"
)

// SenderOptions tune a Sender; zero values take the defaults.
type SenderOptions struct {
	// Heartbeat is how long the Sender stays silent when nothing changes: after that, it
	// sends the latest state again, observed now, so that the hub knows the cluster is
	// alive (default 1m; keep it well under the hub's --stale-after).
	Heartbeat time.Duration
	// MinBackoff and MaxBackoff bound the exponential backoff between failed attempts
	// (defaults 1s and 2m). The n-th consecutive failure waits a random duration in
	// [0, min(MaxBackoff, MinBackoff*2^(n-1))] ("full jitter").
	MinBackoff, MaxBackoff time.Duration
	// AttemptTimeout bounds one delivery attempt (default 30s).
	AttemptTimeout time.Duration
	// Clock is the time source (default: the system clock).
	Clock Clock
	// Jitter returns a uniformly random duration in [0, limit] (default math/rand/v2).
	Jitter func(limit time.Duration) time.Duration
	// Logger receives delivery failures (default: discard).
	Logger *slog.Logger
}

func (o SenderOptions) withDefaults() SenderOptions {
	if o.Heartbeat <= 0 {
		o.Heartbeat = time.Minute
	}
	if o.MinBackoff <= 0 {
		o.MinBackoff = time.Second
	}
	if o.MaxBackoff < o.MinBackoff {
		o.MaxBackoff = max(2*time.Minute, o.MinBackoff)
	}
	if o.AttemptTimeout <= 0 {
		o.AttemptTimeout = 30 * time.Second
	}
	if o.Clock == nil {
		o.Clock = RealClock{}
	}
	if o.Jitter == nil {
		o.Jitter = func(limit time.Duration) time.Duration { return rand.N(limit + 1) } //nolint:gosec // jitter that spreads reports over time; nothing secret depends on it
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return o
}

// Sender delivers a cluster's state to the hub. It keeps only the latest state: a state
// observed before the one it holds is dropped, and one that arrives while an older one
// waits for the hub replaces it, so the hub never receives a stale state after a newer
// one. It sends when the state changes and at every heartbeat, and retries failed
// deliveries with exponential backoff and full jitter, forever: it never gives up the
// latest state.
//
// The observedAt it sends is the state's own, except for heartbeats (the time of the
// heartbeat); it is cut to milliseconds (the hub's precision) and always later than the
// previous one sent with different content, so the hub orders them as they were sent.
type Sender struct {
	poster Poster
	opts   SenderOptions
	wake   chan struct{}

	mu     sync.Mutex
	latest hub.Report
	digest string
	seq    uint64 // counts the states accepted by Update
	has    bool

	// Owned by Run.
	acked      uint64    // seq of the last state the hub acknowledged
	lastStamp  time.Time // observedAt of the last attempt
	lastDigest string    // content of the last attempt
}

// NewSender returns a Sender that delivers through p.
func NewSender(p Poster, opts SenderOptions) *Sender {
	return &Sender{poster: p, opts: opts.withDefaults(), wake: make(chan struct{}, 1)}
}

// Update offers a newly observed state, bounded by Bound. It returns false when the state
// is older (by ObservedAt) than the one the Sender holds, which is kept. A state with the
// same content as the one held changes nothing.
func (s *Sender) Update(r hub.Report) bool {
	r = Bound(r)
	d := contentDigest(r)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.has && r.ObservedAt.Before(s.latest.ObservedAt) {
		return false
	}
	if s.has && d == s.digest {
		return true
	}
	s.latest, s.digest, s.has = r, d, true
	s.seq++
	select {
	case s.wake <- struct{}{}:
	default:
	}
	return true
}

// Forget drops the state held: nothing is sent (no heartbeat either) until the next Update,
// so the hub sees the cluster fall silent rather than a state nobody observes any more.
func (s *Sender) Forget() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.latest, s.digest, s.has = hub.Report{}, "", false
}

// Run delivers states until ctx ends; it returns nil then.
func (s *Sender) Run(ctx context.Context) error {
	clock := s.opts.Clock
	beat := clock.NewTimer(s.opts.Heartbeat)
	var retry Timer
	defer func() {
		beat.Stop()
		if retry != nil {
			retry.Stop()
		}
	}()
	failures, beatDue := 0, false
	for {
		var retryC <-chan time.Time
		if retry != nil {
			retryC = retry.C()
		}
		select {
		case <-ctx.Done():
			return nil
		case <-s.wake:
			if retry != nil {
				continue // the scheduled retry sends the latest state
			}
		case <-retryC:
			retry = nil
		case <-beat.C():
			beatDue = true
			if retry != nil {
				continue
			}
		}
		r, seq, ok := s.next(beatDue)
		if !ok {
			continue
		}
		if err := s.attempt(ctx, r); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			failures++
			delay := s.backoff(failures)
			s.logFailure(ctx, err, failures, delay)
			retry = clock.NewTimer(delay)
			continue
		}
		failures, beatDue, s.acked = 0, false, seq
		beat.Stop()
		beat = clock.NewTimer(max(0, r.ObservedAt.Add(s.opts.Heartbeat).Sub(clock.Now())))
	}
}

// next returns the state to send, stamped, and its sequence number; false when there is
// nothing to send.
func (s *Sender) next(beatDue bool) (hub.Report, uint64, bool) {
	s.mu.Lock()
	r, d, seq, has := s.latest, s.digest, s.seq, s.has
	s.mu.Unlock()
	changed := seq != s.acked
	if !has || (!changed && !beatDue) {
		return hub.Report{}, 0, false
	}
	stamp := r.ObservedAt
	if !changed {
		stamp = s.opts.Clock.Now() // a heartbeat: the state still holds now
	}
	stamp = stamp.Round(0).Truncate(time.Millisecond)
	retrying := d == s.lastDigest && stamp.Equal(s.lastStamp)
	if !stamp.After(s.lastStamp) && !retrying {
		stamp = s.lastStamp.Add(time.Millisecond)
	}
	s.lastStamp, s.lastDigest = stamp, d
	r.ObservedAt = stamp
	return r, seq, true
}

func (s *Sender) attempt(ctx context.Context, r hub.Report) error {
	ctx, cancel := context.WithTimeout(ctx, s.opts.AttemptTimeout)
	defer cancel()
	if err := s.poster.Report(ctx, r); err != nil {
		return fmt.Errorf("report to hub: %w", err)
	}
	return nil
}

// backoff returns the wait after the n-th consecutive failure (n >= 1).
func (s *Sender) backoff(n int) time.Duration {
	limit := s.opts.MaxBackoff
	if n-1 < 32 {
		limit = min(limit, s.opts.MinBackoff<<(n-1))
	}
	return s.opts.Jitter(limit)
}

func (s *Sender) logFailure(ctx context.Context, err error, failures int, delay time.Duration) {
	level := slog.LevelWarn
	var he *client.Error
	if errors.As(err, &he) && he.Status >= 400 && he.Status < 500 && he.Status != 408 && he.Status != 429 {
		level = slog.LevelError // a human must fix the token, the registration or the agent
	}
	s.opts.Logger.Log(ctx, level, "report not delivered; keeping the latest state",
		"error", err.Error(), "failures", failures, "retry_in", delay.String())
}

// contentDigest identifies everything of a report but its time.
func contentDigest(r hub.Report) string {
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s\x00%s\x00%s\x00%s\x00", r.Cluster, r.Revision, r.Status, r.Message, r.GitOpsPath)
	for _, d := range r.Deployments { // sorted by Bound
		fmt.Fprintf(h, "%s\x00%s\x00%s\x00%s\x00", d.DeploymentTarget, d.Namespace, d.Status, d.Revision)
	}
	return hex.EncodeToString(h.Sum(nil)[:16])
}
