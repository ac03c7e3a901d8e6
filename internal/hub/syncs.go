package hub

import (
	"context"
	"fmt"

	"github.com/fleetform/fleetform/internal/repourl"
)

// RecordSync records an apply of an environment by serve. The store keeps the latest
// MaxSyncHistory syncs of each environment: recording one more removes the oldest.
func (h *Hub) RecordSync(ctx context.Context, r SyncRecord) error {
	if err := validateSync(r); err != nil {
		return err
	}
	if r.Time.IsZero() {
		r.Time = h.opts.Now()
	}
	if r.Failed == nil {
		r.Failed = []FailedAssignment{}
	}
	r.Error = repourl.RedactText(r.Error) // a library's message may print a URL with its credentials
	for i := range r.Failed {
		r.Failed[i].Error = repourl.RedactText(r.Failed[i].Error)
	}
	return h.store.Update(ctx, func(tx Tx) error { return tx.AddSync(ctx, r, MaxSyncHistory) })
}

// LatestSync returns the sync of env recorded last. When there is none, the error has
// CodeNotFound and matches ErrNotFound (errors.Is).
func (h *Hub) LatestSync(ctx context.Context, env string) (SyncRecord, error) {
	syncs, err := h.syncs(ctx, env, 1)
	if err != nil {
		return SyncRecord{}, err
	}
	if len(syncs) == 0 {
		return SyncRecord{}, notFoundf("environment %q has no sync recorded (fleetform serve records them)", env)
	}
	return syncs[0], nil
}

// SyncHistory returns the syncs of env the store keeps (at most MaxSyncHistory), the one
// recorded last first.
func (h *Hub) SyncHistory(ctx context.Context, env string) ([]SyncRecord, error) {
	out, err := h.syncs(ctx, env, MaxSyncHistory)
	if out == nil {
		out = []SyncRecord{}
	}
	return out, err
}

func (h *Hub) syncs(ctx context.Context, env string, limit int) ([]SyncRecord, error) {
	var out []SyncRecord
	err := h.store.View(ctx, func(r Reader) error {
		var err error
		out, err = r.Syncs(ctx, env, limit)
		return err
	})
	return out, err
}

func validateSync(r SyncRecord) error {
	if !validName(r.Environment) {
		return Errorf(CodeInvalid, "environment %q is not a valid name", r.Environment)
	}
	if err := checkURL("gitopsRepo", r.GitOpsRepo, false); err != nil {
		return err
	}
	if err := checkURL("pullRequest", r.PullRequest, false); err != nil {
		return err
	}
	switch {
	case r.DurationMS < 0 || r.FilesChanged < 0:
		return Errorf(CodeInvalid, "durationMs and filesChanged may not be negative")
	case len(r.ControlPlaneCommit) > MaxRefLength || len(r.CommonCommit) > MaxRefLength || len(r.Branch) > MaxRefLength ||
		len(r.GitOpsCommit) > MaxRefLength:
		return Errorf(CodeInvalid, "commits and branch may have at most %d bytes", MaxRefLength)
	case len(r.Error) > MaxErrorLength:
		return Errorf(CodeInvalid, "error is longer than %d bytes", MaxErrorLength)
	}
	switch r.Trigger {
	case "", TriggerPoll, TriggerWebhook, TriggerPromotion, TriggerStart, TriggerAuthoring, TriggerMassDeletion, TriggerManual:
	default:
		return Errorf(CodeInvalid, "trigger %q: want %s, %s, %s, %s, %s, %s or %s", r.Trigger, TriggerPoll, TriggerWebhook, TriggerPromotion,
			TriggerStart, TriggerAuthoring, TriggerMassDeletion, TriggerManual)
	}
	return validateFailed(r.Failed)
}

func validateFailed(failed []FailedAssignment) error {
	if len(failed) > MaxFailedAssignments {
		return Errorf(CodeInvalid, "more than %d failed assignments", MaxFailedAssignments)
	}
	for i, f := range failed {
		switch {
		case f.ClusterType == "" || f.DeploymentTarget == "":
			return Errorf(CodeInvalid, "failed[%d]: clusterType and deploymentTarget are required", i)
		case len(f.ClusterType) > MaxRefLength || len(f.DeploymentTarget) > MaxRefLength:
			return Errorf(CodeInvalid, "failed[%d]: clusterType and deploymentTarget may have at most %d bytes", i, MaxRefLength)
		case len(f.Error) > MaxMessageLength:
			return Errorf(CodeInvalid, "failed[%d]: error is longer than %d bytes", i, MaxMessageLength)
		}
	}
	return nil
}

// notFoundError is an *Error with CodeNotFound and its own message that also matches
// ErrNotFound.
type notFoundError struct{ err *Error }

func notFoundf(format string, args ...any) error {
	return notFoundError{&Error{Code: CodeNotFound, Message: fmt.Sprintf(format, args...)}}
}

func (e notFoundError) Error() string { return e.err.Error() }

// Unwrap returns the *Error, for ErrorCode and errors.As.
func (e notFoundError) Unwrap() error { return e.err }

// Is matches ErrNotFound.
func (e notFoundError) Is(target error) bool { return target == ErrNotFound }
