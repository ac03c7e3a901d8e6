package sqlite

import (
	"context"
	"encoding/json"

	"github.com/fleetform/fleetform/internal/hub"
)

const sourceColumns = `url, branch, kind, last_commit, last_poll, last_sync, last_error, failures, next_poll`

func (t *tx) PutSource(ctx context.Context, s hub.SourceState) error {
	_, err := t.q.ExecContext(ctx, `INSERT INTO sources (`+sourceColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (url, branch) DO UPDATE SET kind = excluded.kind, last_commit = excluded.last_commit,
		last_poll = excluded.last_poll, last_sync = excluded.last_sync, last_error = excluded.last_error,
		failures = excluded.failures, next_poll = excluded.next_poll`,
		s.URL, s.Branch, s.Kind, s.LastCommit, ms(s.LastPoll), ms(s.LastSync), s.LastError, s.Failures, ms(s.NextPoll))
	return err
}

func (t *tx) DeleteSource(ctx context.Context, url, branch string) error {
	_, err := t.q.ExecContext(ctx, `DELETE FROM sources WHERE url = ? AND branch = ?`, url, branch)
	return err
}

func (t *tx) Sources(ctx context.Context) ([]hub.SourceState, error) {
	rows, err := t.q.QueryContext(ctx, `SELECT `+sourceColumns+` FROM sources ORDER BY url, branch`)
	if err != nil {
		return nil, err
	}
	defer func() { _ = rows.Close() }()
	var out []hub.SourceState
	for rows.Next() {
		var s hub.SourceState
		var poll, sync, next int64
		if err := rows.Scan(&s.URL, &s.Branch, &s.Kind, &s.LastCommit, &poll, &sync, &s.LastError, &s.Failures, &next); err != nil {
			return nil, err
		}
		s.LastPoll, s.LastSync, s.NextPoll = fromMS(poll), fromMS(sync), fromMS(next)
		out = append(out, s)
	}
	return out, rows.Err()
}

const syncColumns = `environment, time, duration_ms, control_plane_commit, common_commit, gitops_repo, branch, gitops_commit,
	pull_request, no_change, files_changed, failed, error, triggered_by`

// AddSync inserts the sync and deletes the environment's syncs older than its latest keep.
func (t *tx) AddSync(ctx context.Context, r hub.SyncRecord, keep int) error {
	failed, err := json.Marshal(nonNilFailed(r.Failed))
	if err != nil {
		return err
	}
	if _, err := t.q.ExecContext(ctx, `INSERT INTO syncs (`+syncColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		r.Environment, ms(r.Time), r.DurationMS, r.ControlPlaneCommit, r.CommonCommit, r.GitOpsRepo, r.Branch, r.GitOpsCommit,
		r.PullRequest, boolInt(r.NoChange), r.FilesChanged, string(failed), r.Error, r.Trigger); err != nil {
		return err
	}
	_, err = t.q.ExecContext(ctx, `DELETE FROM syncs WHERE environment = ? AND id <= (SELECT id FROM syncs WHERE environment = ?
		ORDER BY id DESC LIMIT 1 OFFSET ?)`, r.Environment, r.Environment, keep)
	return err
}

func (t *tx) Syncs(ctx context.Context, env string, limit int) ([]hub.SyncRecord, error) {
	rows, err := t.q.QueryContext(ctx, `SELECT `+syncColumns+` FROM syncs WHERE environment = ? ORDER BY id DESC LIMIT ?`, env, limit)
	if err != nil {
		return nil, err
	}
	defer func() { _ = rows.Close() }()
	var out []hub.SyncRecord
	for rows.Next() {
		var r hub.SyncRecord
		var at int64
		var noChange int
		var failed string
		if err := rows.Scan(&r.Environment, &at, &r.DurationMS, &r.ControlPlaneCommit, &r.CommonCommit, &r.GitOpsRepo, &r.Branch,
			&r.GitOpsCommit, &r.PullRequest, &noChange, &r.FilesChanged, &failed, &r.Error, &r.Trigger); err != nil {
			return nil, err
		}
		r.Time, r.NoChange = fromMS(at), noChange == 1
		if err := json.Unmarshal([]byte(failed), &r.Failed); err != nil {
			return nil, err
		}
		r.Failed = nonNilFailed(r.Failed)
		out = append(out, r)
	}
	return out, rows.Err()
}

func nonNilFailed(f []hub.FailedAssignment) []hub.FailedAssignment {
	if f == nil {
		return []hub.FailedAssignment{}
	}
	return f
}
