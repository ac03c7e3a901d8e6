package hub

import (
	"context"
	"strings"
	"time"
)

// EventMassDeletion is an intended mass deletion confirmed: serve applies the environment's
// control-plane commit (the event's Revision) although it removes more deployment-target
// folders than the threshold allows.
const EventMassDeletion = "mass-deletion"

// MassDeletionRefused starts the Error of a sync that refused a mass deletion: the web UI
// then offers to confirm it.
const MassDeletionRefused = "mass deletion refused: "

// MassDeletionConfirmation is someone's confirmation that the mass deletion an environment's
// sync refused at a control-plane commit is intended.
type MassDeletionConfirmation struct {
	Environment string
	// Commit is the control-plane commit whose sync was refused: the confirmation holds for
	// that commit only (a later one that removes as much needs its own), and for the refusal
	// it answers only (serve honours it for a deletion its sync refused before the
	// confirmation, of no other folders than that refusal named).
	Commit string
	// Reason says why the deletion is intended; By names who confirms it.
	Reason, By string
	Actor      *Actor
}

// ConfirmMassDeletion records a confirmation in the history (kind mass-deletion).
func (h *Hub) ConfirmMassDeletion(ctx context.Context, c MassDeletionConfirmation) error {
	reason := strings.TrimSpace(c.Reason)
	switch {
	case !validName(c.Environment):
		return Errorf(CodeInvalid, "environment %q is not an environment name", c.Environment)
	case !isCommit(c.Commit):
		return Errorf(CodeInvalid, "commit %q is not a commit: give the control-plane commit of the refused sync", c.Commit)
	case reason == "" || c.By == "":
		return Errorf(CodeInvalid, "a reason is required: say why the deletion is intended")
	case len(reason) > MaxMessageLength:
		return Errorf(CodeInvalid, "the reason is longer than %d bytes", MaxMessageLength)
	}
	return h.store.Update(ctx, func(tx Tx) error {
		return tx.AddEvents(ctx, []Event{{Time: h.opts.Now(), Kind: EventMassDeletion, Environment: c.Environment,
			Revision: c.Commit, Message: "mass deletion at control-plane commit " + short(c.Commit) + " confirmed by " + c.By + ": " + oneLine(reason),
			Actor: c.Actor}})
	})
}

// MassDeletionConfirmed reports whether a mass deletion of env at control-plane commit was
// ever confirmed.
func (h *Hub) MassDeletionConfirmed(ctx context.Context, env, commit string) (bool, error) {
	return h.MassDeletionConfirmedSince(ctx, env, commit, time.Time{})
}

// MassDeletionConfirmedSince reports whether a mass deletion of env at control-plane commit
// was confirmed at since or later (to the millisecond: the precision the stores keep).
func (h *Hub) MassDeletionConfirmedSince(ctx context.Context, env, commit string, since time.Time) (bool, error) {
	if commit == "" {
		return false, nil
	}
	if !since.IsZero() {
		since = since.Truncate(time.Millisecond)
	}
	events, err := h.History(ctx, HistoryFilter{Environment: env, Kind: EventMassDeletion, Revision: commit, Since: since, Limit: 1})
	return len(events) > 0, err
}

// isCommit reports whether s is a full git commit ID (SHA-1 or SHA-256, lowercase hex).
func isCommit(s string) bool {
	if len(s) != 40 && len(s) != 64 {
		return false
	}
	return strings.Trim(s, "0123456789abcdef") == ""
}

// oneLine replaces line breaks and other control characters with spaces.
func oneLine(s string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return ' '
		}
		return r
	}, s)
}
