package hub

import (
	"context"
	"strings"
)

// Change is a change of the control plane made through the authoring API, for the history.
type Change struct {
	// Environment is the environment the change is about; "" for common content or a
	// change of several environments.
	Environment string
	// Revision is the commit the change made (the pull request's head commit); "" when the
	// control plane is a plain directory.
	Revision string
	// By is who made it, as the message names it.
	By string
	// Actor is who made it, and why the access policies allowed it (nil: not known).
	Actor *Actor
	// What says what the change did ("add ClusterType edge in dev; ...").
	What string
	// PullRequest is the pull request's URL when the change was proposed, not committed.
	PullRequest string
}

// maxChangeMessage bounds the message of an authoring event.
const maxChangeMessage = 4096

// RecordChange appends an authoring event to the history: "<what> (by <by>)", with the
// pull request's URL when there is one.
func (h *Hub) RecordChange(ctx context.Context, c Change) error {
	switch {
	case c.By == "" || c.What == "":
		return Errorf(CodeInvalid, "a change needs who made it and what it did")
	case c.Environment != "" && !validName(c.Environment):
		return Errorf(CodeInvalid, "environment %q is not a valid name", c.Environment)
	}
	msg := c.What
	if len(msg) > maxChangeMessage {
		msg = strings.ToValidUTF8(msg[:maxChangeMessage], "") + "…"
	}
	msg += " (by " + strings.TrimSpace(c.By)
	if c.PullRequest != "" {
		msg += ", pull request " + c.PullRequest
	}
	msg += ")"
	e := Event{Time: h.opts.Now(), Kind: EventAuthoring, Environment: c.Environment, Revision: c.Revision, Message: msg, Actor: c.Actor}
	return h.store.Update(ctx, func(tx Tx) error { return tx.AddEvents(ctx, []Event{e}) })
}
