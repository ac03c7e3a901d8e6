package agent

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/fleetform/fleetform/internal/hub"
)

// fakeClock is a Clock that moves only when the test advances it. Every timer it creates is
// announced on created (with its duration), so that a test knows when the Sender waits.
type fakeClock struct {
	mu      sync.Mutex
	now     time.Time
	timers  []*fakeTimer
	created chan time.Duration
}

func newFakeClock() *fakeClock {
	return &fakeClock{now: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC), created: make(chan time.Duration, 1000)}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) NewTimer(d time.Duration) Timer {
	c.mu.Lock()
	t := &fakeTimer{at: c.now.Add(d), ch: make(chan time.Time, 1)}
	if d <= 0 {
		t.fired = true
		t.ch <- c.now
	} else {
		c.timers = append(c.timers, t)
	}
	c.mu.Unlock()
	c.created <- d
	return t
}

// Advance moves the clock and fires the timers that are due.
func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	for _, t := range c.timers {
		t.mu.Lock()
		if !t.fired && !t.stopped && !t.at.After(c.now) {
			t.fired = true
			t.ch <- c.now
		}
		t.mu.Unlock()
	}
}

// waitTimer returns the duration of the next timer the code under test creates.
func (c *fakeClock) waitTimer(t *testing.T) time.Duration {
	t.Helper()
	select {
	case d := <-c.created:
		return d
	case <-time.After(10 * time.Second):
		t.Fatal("no timer was created")
		return 0
	}
}

type fakeTimer struct {
	mu      sync.Mutex
	at      time.Time
	ch      chan time.Time
	fired   bool
	stopped bool
}

func (t *fakeTimer) C() <-chan time.Time { return t.ch }

func (t *fakeTimer) Stop() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	was := !t.fired && !t.stopped
	t.stopped = true
	return was
}

// fakePoster records every attempt; while down, attempts fail.
type fakePoster struct {
	mu        sync.Mutex
	down      bool
	delivered []hub.Report
	attempts  chan hub.Report
}

func newFakePoster() *fakePoster { return &fakePoster{attempts: make(chan hub.Report, 1000)} }

func (p *fakePoster) Report(_ context.Context, r hub.Report) error {
	p.mu.Lock()
	down := p.down
	if !down {
		p.delivered = append(p.delivered, r)
	}
	p.mu.Unlock()
	p.attempts <- r
	if down {
		return errors.New("dial tcp 127.0.0.1:8080: connect: connection refused")
	}
	return nil
}

func (p *fakePoster) setDown(down bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.down = down
}

func (p *fakePoster) deliveredReports() []hub.Report {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]hub.Report(nil), p.delivered...)
}

// waitAttempt returns the next report the Sender tried to deliver.
func (p *fakePoster) waitAttempt(t *testing.T) hub.Report {
	t.Helper()
	select {
	case r := <-p.attempts:
		return r
	case <-time.After(10 * time.Second):
		t.Fatal("no delivery attempt")
		return hub.Report{}
	}
}
