package hub

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"time"
)

// Record appends an event to the history: a promotion or refusal, or an override (recorded
// by promote), with its actor when known.
func (h *Hub) Record(ctx context.Context, e Event) error {
	if (e.Kind != EventPromotion && e.Kind != EventOverride) || !validName(e.Environment) {
		return Errorf(CodeInvalid, "only promotion and override events with an environment can be recorded")
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

// Now is the time on the hub's clock.
func (h *Hub) Now() time.Time { return h.opts.Now() }

// Approval is an approval of a commit for an environment.
type Approval struct {
	Environment string
	Commit      string
	// By names the approver in the history's message ("approved by <by>").
	By string
	// Actor is who approved, and why the access policies allowed it (nil: not known).
	Actor *Actor
	// Rule is the environment's approval rule (spec.promotion.approvals).
	Rule ApprovalRule
}

// ApprovalRule is an environment's four-eyes rule: how many approvals from distinct
// identities a promotion into it needs, and whether the author of the change promoted may
// be one of them.
type ApprovalRule struct {
	Count              int  `json:"count,omitempty"`
	DistinctFromAuthor bool `json:"distinctFromAuthor,omitempty"`
}

// Approve records that commit may be promoted into env, by whom.
func (h *Hub) Approve(ctx context.Context, env, commit, by string) error {
	return h.ApproveAs(ctx, Approval{Environment: env, Commit: commit, By: by})
}

// ApproveAs records an approval with who made it. With the rule's DistinctFromAuthor, the
// author of the change (see Authors) may not approve it: CodeForbidden, with the reason.
func (h *Hub) ApproveAs(ctx context.Context, a Approval) error {
	if !validName(a.Environment) || a.Commit == "" || a.By == "" {
		return Errorf(CodeInvalid, "environment, commit and approver are required")
	}
	return h.store.Update(ctx, func(tx Tx) error {
		if a.Rule.DistinctFromAuthor && a.Actor != nil && !a.Actor.Admin {
			authors, err := tx.History(ctx, authorsFilter(a.Commit))
			if err != nil {
				return err
			}
			if slices.ContainsFunc(authors, func(e Event) bool { return e.Actor.Key() == a.Actor.Key() }) {
				return Errorf(CodeForbidden, "%s made the change of commit %s and may not approve its promotion into %s: "+
					"%s needs approvals from identities other than the author", a.Actor, short(a.Commit), a.Environment, a.Environment)
			}
		}
		return tx.AddEvents(ctx, []Event{{Time: h.opts.Now(), Kind: EventApproval, Environment: a.Environment,
			Revision: a.Commit, Message: "approved by " + a.By, Actor: a.Actor}})
	})
}

// authorsFilter selects the authoring events of a commit: the change an approval is about
// was made by their actors.
func authorsFilter(commit string) HistoryFilter {
	return HistoryFilter{Kind: EventAuthoring, Revision: commit, Limit: MaxHistoryLimit}
}

// Authors returns the authoring events of commit: who made the change (through the
// authoring API or the web UI) a promotion of commit carries.
func (h *Hub) Authors(ctx context.Context, commit string) ([]Event, error) {
	if commit == "" {
		return []Event{}, nil
	}
	return h.History(ctx, authorsFilter(commit))
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

// Approvers returns who approved commit for env, one name per distinct identity, oldest
// first; with distinctFromAuthor, the authors of the change are left out.
func (h *Hub) Approvers(ctx context.Context, env, commit string, distinctFromAuthor bool) ([]string, error) {
	approvals, err := h.Approvals(ctx, env)
	if err != nil {
		return nil, err
	}
	var authors []Event
	if distinctFromAuthor {
		if authors, err = h.Authors(ctx, commit); err != nil {
			return nil, err
		}
	}
	return DistinctApprovers(approvals, authors, commit), nil
}

// DistinctApprovers names the distinct identities of the approvals of commit (newest first,
// as the history answers), oldest first, leaving out the actors of authors. Two records are
// the same identity when they share a key (approvalKeys): a person's Actor Key, and their
// email; the admin token, which records whom it names, and approvals recorded without an
// actor count by the name they record, and, when it is an email, as that person.
func DistinctApprovers(approvals, authors []Event, commit string) []string {
	excluded := map[string]bool{}
	for _, e := range authors {
		for _, k := range actorKeys(e.Actor) {
			excluded[k] = true
		}
	}
	seen := map[string]bool{}
	var out []string
	for _, e := range slices.Backward(approvals) {
		if e.Revision != commit {
			continue
		}
		name := strings.TrimPrefix(e.Message, "approved by ")
		keys := approvalKeys(e, name)
		if slices.ContainsFunc(keys, func(k string) bool { return excluded[k] || seen[k] }) {
			continue
		}
		for _, k := range keys {
			seen[k] = true
		}
		out = append(out, name)
	}
	return out
}

// approvalKeys are the keys of an approval's identity: its actor's (actorKeys), or for the
// admin token and an approval without an actor, the name it records and, when that name is
// an email, the email's.
func approvalKeys(e Event, name string) []string {
	if e.Actor != nil && !e.Actor.Admin {
		return actorKeys(e.Actor)
	}
	keys := []string{"by:" + strings.ToLower(name)}
	if strings.Contains(name, "@") {
		keys = append(keys, "email:"+strings.ToLower(name))
	}
	return keys
}

// actorKeys are an actor's Key and, when it has one, its email's key.
func actorKeys(a *Actor) []string {
	var keys []string
	if k := a.Key(); k != "" {
		keys = append(keys, k)
	}
	if a != nil && a.Email != "" {
		keys = append(keys, "email:"+strings.ToLower(a.Email))
	}
	return keys
}

func short(c string) string { return c[:min(len(c), 7)] }

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

// ApprovalRules are the environments' four-eyes rules as the control plane declares them,
// safe for concurrent use: fleetform serve sets them as it reads the environments, and
// approvals read them. A nil *ApprovalRules has none.
type ApprovalRules struct {
	mu    sync.RWMutex
	rules map[string]ApprovalRule
}

// NewApprovalRules returns rules with none set.
func NewApprovalRules() *ApprovalRules { return &ApprovalRules{rules: map[string]ApprovalRule{}} }

// Set replaces the rules by these, by environment.
func (r *ApprovalRules) Set(rules map[string]ApprovalRule) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.rules = rules
}

// ApprovalRule is env's rule (none when it has none).
func (r *ApprovalRules) ApprovalRule(env string) ApprovalRule {
	if r == nil {
		return ApprovalRule{}
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.rules[env]
}
