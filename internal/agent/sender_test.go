package agent

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/fleetform/fleetform/internal/hub"
)

// harness runs a Sender with a fake clock, a fake poster and a jitter that always waits the
// longest allowed time (and records the limits it was asked for).
type harness struct {
	clock  *fakeClock
	poster *fakePoster
	sender *Sender

	mu     sync.Mutex
	limits []time.Duration
}

func newHarness(t *testing.T, opts SenderOptions) *harness {
	t.Helper()
	h := &harness{clock: newFakeClock(), poster: newFakePoster()}
	opts.Clock = h.clock
	opts.Jitter = func(limit time.Duration) time.Duration {
		h.mu.Lock()
		defer h.mu.Unlock()
		h.limits = append(h.limits, limit)
		return limit
	}
	h.sender = NewSender(h.poster, opts)
	return h
}

// start runs the Sender until the test ends and returns once it armed its first heartbeat.
func (h *harness) start(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := h.sender.Run(ctx); err != nil {
			t.Errorf("Run: %v", err)
		}
	}()
	t.Cleanup(func() { cancel(); <-done })
	if d := h.clock.waitTimer(t); d != time.Minute {
		t.Fatalf("first heartbeat timer = %v, want 1m", d)
	}
}

func (h *harness) backoffLimits() []time.Duration {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]time.Duration(nil), h.limits...)
}

func state(revision string, at time.Time, deps ...hub.DeploymentReport) hub.Report {
	return hub.Report{Cluster: "c1", Revision: revision, Status: hub.Compliant, ObservedAt: at, Deployments: deps}
}

func TestSenderHubDownThenUpDeliversOnlyTheNewest(t *testing.T) {
	h := newHarness(t, SenderOptions{MinBackoff: time.Second, MaxBackoff: 4 * time.Second})
	h.poster.setDown(true)
	t0 := h.clock.Now()
	h.sender.Update(state("r1", t0))
	h.start(t)

	if got := h.poster.waitAttempt(t); got.Revision != "r1" {
		t.Fatalf("first attempt sent %q, want r1", got.Revision)
	}
	if d := h.clock.waitTimer(t); d != time.Second {
		t.Fatalf("first retry in %v, want 1s (jitter at its limit)", d)
	}
	// Newer states arrive while the hub is down: they replace r1, nothing is sent early.
	h.sender.Update(state("r2", t0.Add(500*time.Millisecond)))
	h.sender.Update(state("r3", t0.Add(600*time.Millisecond)))

	for i, want := range []time.Duration{2 * time.Second, 4 * time.Second, 4 * time.Second} {
		h.clock.Advance(time.Hour / 100) // 36s: past any backoff, before the heartbeat
		if got := h.poster.waitAttempt(t); got.Revision != "r3" {
			t.Fatalf("retry %d sent %q, want the newest state r3", i+1, got.Revision)
		}
		if d := h.clock.waitTimer(t); d != want {
			t.Fatalf("retry %d: next wait %v, want %v", i+1, d, want)
		}
	}

	h.poster.setDown(false)
	h.clock.Advance(4 * time.Second)
	got := h.poster.waitAttempt(t)
	if got.Revision != "r3" || !got.ObservedAt.Equal(t0.Add(600*time.Millisecond)) {
		t.Fatalf("after the hub came back: sent %q observed at %v, want r3 observed at t0+600ms", got.Revision, got.ObservedAt)
	}
	// r3 was observed long ago: a heartbeat follows at once, observed now.
	if d := h.clock.waitTimer(t); d != 0 {
		t.Fatalf("heartbeat after a late delivery in %v, want 0", d)
	}
	if got := h.poster.waitAttempt(t); got.Revision != "r3" || !got.ObservedAt.Equal(h.clock.Now()) {
		t.Fatalf("heartbeat sent %q observed at %v, want r3 observed now", got.Revision, got.ObservedAt)
	}
	h.clock.waitTimer(t)

	h.sender.Update(state("r4", h.clock.Now().Add(time.Millisecond)))
	if got := h.poster.waitAttempt(t); got.Revision != "r4" {
		t.Fatalf("next change sent %q, want r4", got.Revision)
	}
	delivered := h.poster.deliveredReports()
	if got := revisions(delivered); len(got) != 3 || got[0] != "r3" || got[1] != "r3" || got[2] != "r4" {
		t.Fatalf("delivered %v, want r3, r3 (heartbeat), r4: never r1 or r2", got)
	}
	for i := 1; i < len(delivered); i++ {
		if !delivered[i].ObservedAt.After(delivered[i-1].ObservedAt) {
			t.Fatalf("delivered observedAt not increasing: %v then %v", delivered[i-1].ObservedAt, delivered[i].ObservedAt)
		}
	}
	limits := h.backoffLimits()
	wantLimits := []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 4 * time.Second}
	if len(limits) != len(wantLimits) {
		t.Fatalf("backoff limits %v, want %v", limits, wantLimits)
	}
	for i := range limits {
		if limits[i] != wantLimits[i] {
			t.Fatalf("backoff limits %v, want %v (exponential, capped)", limits, wantLimits)
		}
	}
}

func TestSenderDropsAStaleState(t *testing.T) {
	h := newHarness(t, SenderOptions{})
	t0 := h.clock.Now()
	if !h.sender.Update(state("new", t0)) {
		t.Fatal("Update(new) = false")
	}
	if h.sender.Update(state("old", t0.Add(-time.Second))) {
		t.Fatal("Update(old) = true, want false: it was observed before the state held")
	}
	h.start(t)
	if got := h.poster.waitAttempt(t); got.Revision != "new" {
		t.Fatalf("sent %q, want new", got.Revision)
	}
}

func TestSenderSameContentIsNotSentAgain(t *testing.T) {
	h := newHarness(t, SenderOptions{})
	t0 := h.clock.Now()
	h.sender.Update(state("r1", t0))
	h.start(t)
	h.poster.waitAttempt(t)
	h.clock.waitTimer(t) // heartbeat re-armed after the delivery
	h.sender.Update(state("r1", t0.Add(time.Second)))
	h.sender.Update(state("r2", t0.Add(2*time.Second)))
	if got := h.poster.waitAttempt(t); got.Revision != "r2" {
		t.Fatalf("sent %q after an unchanged state and a change, want r2 (the unchanged one is not sent)", got.Revision)
	}
}

func TestSenderHeartbeat(t *testing.T) {
	h := newHarness(t, SenderOptions{Heartbeat: time.Minute})
	t0 := h.clock.Now()
	h.sender.Update(state("r1", t0))
	h.start(t)
	h.poster.waitAttempt(t)
	if d := h.clock.waitTimer(t); d != time.Minute {
		t.Fatalf("heartbeat armed for %v after a delivery, want 1m", d)
	}
	for i := 1; i <= 3; i++ {
		h.clock.Advance(time.Minute)
		got := h.poster.waitAttempt(t)
		if got.Revision != "r1" || !got.ObservedAt.Equal(t0.Add(time.Duration(i)*time.Minute)) {
			t.Fatalf("heartbeat %d: %q observed at %v, want r1 observed at t0+%dm", i, got.Revision, got.ObservedAt, i)
		}
		if d := h.clock.waitTimer(t); d != time.Minute {
			t.Fatalf("heartbeat %d: next one in %v, want 1m", i, d)
		}
	}
}

func TestSenderHeartbeatRightAfterALateDelivery(t *testing.T) {
	// A state delivered long after it was observed (the link was down) is followed at once
	// by a heartbeat, so that the hub does not count the cluster as silent.
	h := newHarness(t, SenderOptions{Heartbeat: time.Minute, MinBackoff: time.Minute, MaxBackoff: time.Minute})
	h.poster.setDown(true)
	t0 := h.clock.Now()
	h.sender.Update(state("r1", t0))
	h.start(t)
	h.poster.waitAttempt(t)
	h.clock.waitTimer(t) // retry in 1m
	h.poster.setDown(false)
	h.clock.Advance(90 * time.Second)
	if got := h.poster.waitAttempt(t); !got.ObservedAt.Equal(t0) {
		t.Fatalf("late delivery observed at %v, want its own time %v", got.ObservedAt, t0)
	}
	if d := h.clock.waitTimer(t); d != 0 {
		t.Fatalf("heartbeat after a late delivery in %v, want 0", d)
	}
	if got := h.poster.waitAttempt(t); !got.ObservedAt.Equal(t0.Add(90 * time.Second)) {
		t.Fatalf("heartbeat observed at %v, want now (t0+90s)", got.ObservedAt)
	}
}

func TestSenderObservedAtAlwaysIncreases(t *testing.T) {
	// A change observed before the last heartbeat was sent (it raced with it) still reaches
	// the hub as newer than the heartbeat.
	h := newHarness(t, SenderOptions{Heartbeat: time.Minute})
	t0 := h.clock.Now()
	h.sender.Update(state("r1", t0))
	h.start(t)
	first := h.poster.waitAttempt(t)
	h.clock.waitTimer(t)
	h.clock.Advance(time.Minute)
	beat := h.poster.waitAttempt(t)
	h.clock.waitTimer(t)
	h.sender.Update(state("r2", t0.Add(30*time.Second)))
	change := h.poster.waitAttempt(t)
	if change.Revision != "r2" {
		t.Fatalf("sent %q, want r2", change.Revision)
	}
	if !first.ObservedAt.Before(beat.ObservedAt) || !beat.ObservedAt.Before(change.ObservedAt) {
		t.Fatalf("observedAt not increasing: %v, %v, %v", first.ObservedAt, beat.ObservedAt, change.ObservedAt)
	}
	if want := beat.ObservedAt.Add(time.Millisecond); !change.ObservedAt.Equal(want) {
		t.Fatalf("change observed at %v, want %v (1ms after the heartbeat)", change.ObservedAt, want)
	}
}

func TestSenderRetryKeepsTheObservedTime(t *testing.T) {
	h := newHarness(t, SenderOptions{MinBackoff: time.Second, MaxBackoff: time.Second})
	h.poster.setDown(true)
	t0 := h.clock.Now().Add(123456 * time.Microsecond)
	h.sender.Update(state("r1", t0))
	h.start(t)
	for range 3 {
		got := h.poster.waitAttempt(t)
		if want := t0.Truncate(time.Millisecond); !got.ObservedAt.Equal(want) {
			t.Fatalf("attempt observed at %v, want %v (the state's time, in milliseconds)", got.ObservedAt, want)
		}
		h.clock.waitTimer(t)
		h.clock.Advance(time.Second)
	}
}

func revisions(rs []hub.Report) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = r.Revision
	}
	return out
}

func TestSenderForgetStopsHeartbeatsUntilTheNextState(t *testing.T) {
	h := newHarness(t, SenderOptions{Heartbeat: time.Minute})
	t0 := h.clock.Now()
	h.sender.Update(state("r1", t0))
	h.start(t)
	h.poster.waitAttempt(t)
	h.clock.waitTimer(t) // heartbeat armed
	h.sender.Forget()
	h.clock.Advance(3 * time.Minute)
	select {
	case got := <-h.poster.attempts:
		t.Fatalf("sent %+v after Forget", got)
	case <-time.After(100 * time.Millisecond):
	}
	h.sender.Update(state("r2", t0.Add(time.Second))) // older than the clock, newer than what was sent
	if got := h.poster.waitAttempt(t); got.Revision != "r2" || !got.ObservedAt.After(t0) {
		t.Fatalf("after Forget and a new state: sent %q observed at %v, want r2 after %v", got.Revision, got.ObservedAt, t0)
	}
}
