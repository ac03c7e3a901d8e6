package promote

import (
	"context"
	"fmt"
	"log/slog"
	"regexp"
	"strings"
	"time"

	"github.com/fleetform/fleetform/internal/controlplane"
)

// Watcher follows the chain: every round, each environment with automatic promotion whose
// source is pinned to another commit than it gets that commit as soon as the gates pass,
// and is then applied. A refusal is recorded once per environment, commit and facts, not
// every round: durations (a soak's time) change every round and do not count, but a reason
// that comes or goes, or a count that changes (clusters reporting, now failing), records the
// refusal again, so that the history states the current facts.
type Watcher struct {
	Promoter *Promoter
	// Open reads the control plane afresh (a promotion moves it).
	Open func(ctx context.Context) (*controlplane.ControlPlane, error)
	// Apply renders an environment into its GitOps repository after a promotion (and posts
	// its desired state to the hub); nil promotes only.
	Apply func(ctx context.Context, cp *controlplane.ControlPlane, env string) error
	// Now is the clock (time.Now when nil).
	Now    func() time.Time
	Actor  string
	Logger *slog.Logger

	refused map[string]string // environment -> the refusal recorded last (refusalKey)
}

// Round makes one pass over the chain, sources first, and returns the decisions taken
// (environments already at their source's pin are skipped).
func (w *Watcher) Round(ctx context.Context) ([]Result, error) {
	round, err := w.newRound(ctx)
	if err != nil {
		return nil, err
	}
	var out []Result
	for _, env := range round.Chain.Order {
		g := round.Chain.Gates[env]
		if !g.Automatic || g.From == "" {
			continue
		}
		behind, err := w.behind(ctx, round, g)
		if err != nil {
			return out, err
		}
		if !behind {
			continue
		}
		res, err := w.promote(ctx, round, env)
		if err != nil {
			return out, fmt.Errorf("promote %s: %w", env, err)
		}
		out = append(out, res)
		if res.Promoted {
			if round, err = w.newRound(ctx); err != nil { // the pin moved the control plane
				return out, err
			}
			if w.Apply != nil {
				if err := w.Apply(ctx, round.ControlPlane, env); err != nil {
					return out, fmt.Errorf("apply %s after promoting %s: %w", env, short(res.Commit), err)
				}
			}
		}
	}
	return out, nil
}

// newRound reads the control plane afresh, with its chain.
func (w *Watcher) newRound(ctx context.Context) (*Round, error) {
	cp, err := w.Open(ctx)
	if err != nil {
		return nil, err
	}
	return NewRound(ctx, cp)
}

// behind reports whether env is pinned to another commit than its source, or not pinned at
// all (it follows the tip: an automatic environment is gated, so it gets pinned).
func (w *Watcher) behind(ctx context.Context, round *Round, g Gates) (bool, error) {
	src, err := round.Snapshot(ctx, g.From)
	if err != nil {
		return false, err
	}
	dst, err := round.Snapshot(ctx, g.Environment)
	if err != nil {
		return false, err
	}
	unpinned := !dst.Revisions.Pinned && dst.Revisions.Common != ""
	return src.Revisions.Common != dst.Revisions.Common || unpinned, nil
}

func (w *Watcher) promote(ctx context.Context, round *Round, env string) (Result, error) {
	now := time.Now
	if w.Now != nil {
		now = w.Now
	}
	req := Request{ControlPlane: round.ControlPlane, To: env, Now: now(), Actor: w.Actor, QuietRefusal: true, Round: round}
	res, err := w.Promoter.Promote(ctx, req)
	if err != nil {
		return res, err
	}
	if w.refused == nil {
		w.refused = map[string]string{}
	}
	if res.Promoted {
		delete(w.refused, env)
		w.log(ctx, "promoted", "environment", env, "commit", short(res.Commit))
		return res, nil
	}
	if key := refusalKey(res); w.refused[env] != key {
		w.refused[env] = key
		w.Promoter.record(ctx, req, res, "refused: "+strings.Join(res.Reasons, "; "))
		w.log(ctx, "waiting", "environment", env, "commit", short(res.Commit), "reasons", strings.Join(res.Reasons, "; "))
	}
	return res, nil
}

// durations matches the durations a reason states (2m26s, 30m0s, 500ms).
var durations = regexp.MustCompile(`(\d+(\.\d+)?(ns|µs|us|ms|h|m|s))+\b`)

// refusalKey identifies a refusal by its commit and its reasons with every duration masked.
func refusalKey(res Result) string {
	masked := make([]string, len(res.Reasons))
	for i, r := range res.Reasons {
		masked[i] = durations.ReplaceAllString(r, "#")
	}
	return res.Commit + "\x00" + strings.Join(masked, "\x00")
}

func (w *Watcher) log(ctx context.Context, msg string, args ...any) {
	if w.Logger != nil {
		w.Logger.InfoContext(ctx, msg, args...)
	}
}

// Run calls Round every interval until ctx ends; a failed round is logged and retried.
func (w *Watcher) Run(ctx context.Context, interval time.Duration) error {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		if _, err := w.Round(ctx); err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if w.Logger != nil {
				w.Logger.WarnContext(ctx, "promotion round failed", "error", err.Error())
			}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
	}
}
