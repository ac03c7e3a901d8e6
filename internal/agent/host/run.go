package host

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/fleetform/fleetform/internal/agent"
	"github.com/fleetform/fleetform/internal/hub"
)

// RunOptions say how the host agent runs.
type RunOptions struct {
	Options
	// HubURL is where the reports go (with Check, nowhere), with the token from TokenFile
	// (read before every report), else Token; Heartbeat is how long the agent waits without
	// a change before it sends the state again.
	HubURL, TokenFile, Token string
	Heartbeat                time.Duration
	// Once applies and reports once (also with Check); else every Interval until the
	// context ends.
	Once     bool
	Interval time.Duration
}

// OptionsError is a run whose options are wrong in themselves.
type OptionsError struct{ Err error }

func (e *OptionsError) Error() string { return e.Err.Error() }

// Unwrap returns the cause.
func (e *OptionsError) Unwrap() error { return e.Err }

// ErrNotCompliant is the end of a single run whose report is not Compliant.
var ErrNotCompliant = errors.New("a deployment target did not apply")

// Run runs the host agent: it applies the host's deployment targets and reports them, once
// or every interval until ctx ends, telling report every report it makes (to print).
func Run(ctx context.Context, o RunOptions, report func(hub.Report)) error {
	var poster *agent.HTTPPoster
	if !o.Check {
		var err error
		to := agent.Hub{URL: o.HubURL, Cluster: o.Cluster, TokenFile: o.TokenFile, Token: o.Token}
		if poster, err = to.Poster(); err != nil {
			return err
		}
	}
	a, err := New(o.Options)
	if err != nil {
		return &OptionsError{Err: err}
	}
	if o.Once || o.Check {
		return runOnce(ctx, a, poster, report)
	}
	return runLoop(ctx, a, poster, o, report)
}

func runOnce(ctx context.Context, a *Agent, poster *agent.HTTPPoster, report func(hub.Report)) error {
	r, err := a.Cycle(ctx)
	if err != nil {
		return err
	}
	report(r)
	if poster != nil {
		if err := deliverWithRetries(ctx, poster, r, 5); err != nil {
			return fmt.Errorf("report to the hub: %w", err)
		}
	}
	if r.Status != hub.Compliant {
		return ErrNotCompliant
	}
	return nil
}

func runLoop(ctx context.Context, a *Agent, poster *agent.HTTPPoster, o RunOptions, report func(hub.Report)) error {
	sender, stop := agent.Sending(ctx, poster, agent.SenderOptions{Heartbeat: o.Heartbeat, Logger: o.Logger})
	defer stop()
	tick := time.NewTicker(o.Interval)
	defer tick.Stop()
	for {
		r, err := a.Cycle(ctx)
		switch {
		case ctx.Err() != nil:
			return nil
		case err != nil:
			o.Logger.ErrorContext(ctx, "run failed", "error", err.Error())
		default:
			report(r)
			sender.Update(r)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
	}
}

// deliverWithRetries posts r, trying again after a random wait that doubles each time, up to
// attempts tries.
func deliverWithRetries(ctx context.Context, p agent.Poster, r hub.Report, attempts int) error {
	var err error
	for i := range attempts {
		if err = p.Report(ctx, r); err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Duration(rand.N(int64(time.Second) << i))): //nolint:gosec // retry backoff jitter; nothing secret depends on it
		}
	}
	return err
}
