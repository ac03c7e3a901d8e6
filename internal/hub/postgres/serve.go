package postgres

import (
	"context"
	"encoding/json"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/fleetform/fleetform/internal/hub"
)

const sourceColumns = `url, branch, kind, last_commit, last_poll, last_sync, last_error, failures, next_poll`

// PutSource writes a source with the transaction's next statement.
func (t *tx) PutSource(_ context.Context, s hub.SourceState) error {
	t.queue(`INSERT INTO sources (`+sourceColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
		ON CONFLICT (url, branch) DO UPDATE SET kind = excluded.kind, last_commit = excluded.last_commit,
		last_poll = excluded.last_poll, last_sync = excluded.last_sync, last_error = excluded.last_error,
		failures = excluded.failures, next_poll = excluded.next_poll`,
		s.URL, s.Branch, s.Kind, s.LastCommit, ts(s.LastPoll), ts(s.LastSync), s.LastError, s.Failures, ts(s.NextPoll))
	return nil
}

func (t *tx) DeleteSource(_ context.Context, url, branch string) error {
	t.queue(`DELETE FROM sources WHERE url = $1 AND branch = $2`, url, branch)
	return nil
}

func (t *tx) Sources(ctx context.Context) ([]hub.SourceState, error) {
	rows, err := t.query(ctx, `SELECT `+sourceColumns+` FROM sources ORDER BY url, branch`)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (hub.SourceState, error) {
		var s hub.SourceState
		var poll, sync, next pgtype.Timestamptz
		err := row.Scan(&s.URL, &s.Branch, &s.Kind, &s.LastCommit, &poll, &sync, &s.LastError, &s.Failures, &next)
		s.LastPoll, s.LastSync, s.NextPoll = fromTS(poll), fromTS(sync), fromTS(next)
		return s, err
	})
}

const syncColumns = `environment, time, duration_ms, control_plane_commit, common_commit, gitops_repo, branch, gitops_commit,
	pull_request, no_change, files_changed, failed, error, triggered_by`

// AddSync inserts the sync and deletes the environment's syncs older than its latest keep,
// with the transaction's next statement.
func (t *tx) AddSync(_ context.Context, r hub.SyncRecord, keep int) error {
	failed := r.Failed
	if failed == nil {
		failed = []hub.FailedAssignment{}
	}
	raw, err := marshalJSON(failed)
	if err != nil {
		return err
	}
	t.queue(`INSERT INTO syncs (`+syncColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12::jsonb, $13, $14)`,
		r.Environment, r.Time, r.DurationMS, r.ControlPlaneCommit, r.CommonCommit, r.GitOpsRepo, r.Branch, r.GitOpsCommit,
		r.PullRequest, r.NoChange, r.FilesChanged, raw, r.Error, r.Trigger)
	t.queue(`DELETE FROM syncs WHERE environment = $1 AND id <= (SELECT id FROM syncs WHERE environment = $1
		ORDER BY id DESC LIMIT 1 OFFSET $2)`, r.Environment, keep)
	return nil
}

func (t *tx) Syncs(ctx context.Context, env string, limit int) ([]hub.SyncRecord, error) {
	rows, err := t.query(ctx, `SELECT `+syncColumns+` FROM syncs WHERE environment = $1 ORDER BY id DESC LIMIT $2`, env, limit)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (hub.SyncRecord, error) {
		var r hub.SyncRecord
		var at pgtype.Timestamptz
		var failed []byte
		err := row.Scan(&r.Environment, &at, &r.DurationMS, &r.ControlPlaneCommit, &r.CommonCommit, &r.GitOpsRepo, &r.Branch,
			&r.GitOpsCommit, &r.PullRequest, &r.NoChange, &r.FilesChanged, &failed, &r.Error, &r.Trigger)
		if err != nil {
			return r, err
		}
		r.Time = fromTS(at)
		if err := json.Unmarshal(failed, &r.Failed); err != nil {
			return r, err
		}
		if r.Failed == nil {
			r.Failed = []hub.FailedAssignment{}
		}
		return r, nil
	})
}
