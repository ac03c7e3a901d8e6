package hub

import (
	"context"
	"errors"
	"time"
)

// Record appends an event to the history (promotions and refusals, recorded by promote).
func (h *Hub) Record(ctx context.Context, e Event) error {
	if e.Kind != EventPromotion || !validName(e.Environment) {
		return Errorf(CodeInvalid, "only promotion events with an environment can be recorded")
	}
	now := h.opts.Now()
	if e.Time.IsZero() {
		e.Time = now
	}
	if err := h.checkNotAhead("time", e.Time, now); err != nil {
		return err
	}
	return h.store.Update(ctx, func(tx Tx) error { return tx.AddEvents(ctx, []Event{e}) })
}

// Approve records that commit may be promoted into env, by whom.
func (h *Hub) Approve(ctx context.Context, env, commit, by string) error {
	if !validName(env) || commit == "" || by == "" {
		return Errorf(CodeInvalid, "environment, commit and approver are required")
	}
	return h.store.Update(ctx, func(tx Tx) error {
		return tx.AddEvents(ctx, []Event{{Time: h.opts.Now(), Kind: EventApproval, Environment: env, Revision: commit,
			Message: "approved by " + by}})
	})
}

// Approvals returns the approvals recorded for env, newest first.
func (h *Hub) Approvals(ctx context.Context, env string) ([]Event, error) {
	return h.History(ctx, HistoryFilter{Environment: env, Kind: EventApproval, Limit: MaxHistoryLimit})
}

// Approved reports whether commit was approved for env.
func (h *Hub) Approved(ctx context.Context, env, commit string) (bool, error) {
	events, err := h.Approvals(ctx, env)
	for _, e := range events {
		if e.Revision == commit {
			return true, err
		}
	}
	return false, err
}

// EnvironmentSource is what a promotion needs to know of its source environment.
type EnvironmentSource struct {
	Rollout Rollout `json:"rollout"`
	// PromotedCommit is the control-plane commit the latest desired revision rendered.
	PromotedCommit string    `json:"promotedCommit"`
	PostedAt       time.Time `json:"postedAt"`
	// LastChange is the latest state change of the environment's clusters or deployments
	// since the revision was posted (zero when none).
	LastChange time.Time `json:"lastChange"`
}

// Source returns an environment's rollout with what promotion gates need.
func (h *Hub) Source(ctx context.Context, env string) (EnvironmentSource, error) {
	var out EnvironmentSource
	r, err := h.Rollout(ctx, env)
	if err != nil {
		return out, err
	}
	out.Rollout = r
	err = h.store.View(ctx, func(rd Reader) error {
		d, err := rd.LatestDesired(ctx, env)
		if err != nil {
			return err
		}
		out.PromotedCommit, out.PostedAt = d.PromotedCommit, d.PostedAt
		for _, kind := range []string{EventCluster, EventDeployment} {
			events, err := rd.History(ctx, HistoryFilter{Environment: env, Kind: kind, Since: d.PostedAt, Limit: 1})
			if err != nil {
				return err
			}
			if len(events) > 0 && events[0].Time.After(out.LastChange) {
				out.LastChange = events[0].Time
			}
		}
		return nil
	})
	if errors.Is(err, ErrNotFound) {
		return out, Errorf(CodeNotFound, "environment %q has no desired state", env)
	}
	return out, err
}
