package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"time"

	"github.com/fleetform/fleetform/internal/hub"
)

// querier is what a transaction offers.
type querier interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

type tx struct{ q querier }

var _ hub.Tx = (*tx)(nil)

func ms(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMilli()
}

func fromMS(v int64) time.Time {
	if v == 0 {
		return time.Time{}
	}
	return time.UnixMilli(v).UTC()
}

func notFound(err error) error {
	if errors.Is(err, sql.ErrNoRows) {
		return hub.ErrNotFound
	}
	return err
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

const clusterColumns = `name, environment, cluster_type, labels, token_hash, registered_at, reported, revision, status,
	message, observed_at, received_at, gitops_path, fresh, digest`

func scanCluster(row interface{ Scan(...any) error }) (hub.ClusterRecord, error) {
	var c hub.ClusterRecord
	var labels string
	var registered, observed, received int64
	var reported, fresh int
	err := row.Scan(&c.Name, &c.Environment, &c.ClusterType, &labels, &c.TokenHash, &registered, &reported, &c.Revision,
		&c.Status, &c.Message, &observed, &received, &c.GitOpsPath, &fresh, &c.Digest)
	if err != nil {
		return c, notFound(err)
	}
	if err := json.Unmarshal([]byte(labels), &c.Labels); err != nil {
		return c, err
	}
	c.RegisteredAt, c.ObservedAt, c.ReceivedAt = fromMS(registered), fromMS(observed), fromMS(received)
	c.Reported, c.Fresh = reported == 1, fresh == 1
	return c, nil
}

func (t *tx) Cluster(ctx context.Context, name string) (hub.ClusterRecord, error) {
	return scanCluster(t.q.QueryRowContext(ctx, `SELECT `+clusterColumns+` FROM clusters WHERE name = ?`, name))
}

// LockCluster reads a cluster; the write transaction (BEGIN IMMEDIATE) already excludes
// other writers.
func (t *tx) LockCluster(ctx context.Context, name string) (hub.ClusterRecord, error) {
	return t.Cluster(ctx, name)
}

// LockEnvironment does nothing: SQLite has a single writer.
func (t *tx) LockEnvironment(context.Context, string, bool) error { return nil }

func (t *tx) Clusters(ctx context.Context, env string) ([]hub.ClusterRecord, error) {
	q := `SELECT ` + clusterColumns + ` FROM clusters`
	var args []any
	if env != "" {
		q += ` WHERE environment = ?`
		args = append(args, env)
	}
	rows, err := t.q.QueryContext(ctx, q+` ORDER BY name`, args...)
	if err != nil {
		return nil, err
	}
	defer func() { _ = rows.Close() }()
	var out []hub.ClusterRecord
	for rows.Next() {
		c, err := scanCluster(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

func (t *tx) InsertCluster(ctx context.Context, c hub.ClusterRecord) error {
	if _, err := t.Cluster(ctx, c.Name); err == nil {
		return hub.ErrExists
	}
	return t.writeCluster(ctx, `INSERT INTO clusters (`+clusterColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, c, false)
}

func (t *tx) UpdateCluster(ctx context.Context, c hub.ClusterRecord) error {
	return t.writeCluster(ctx, `UPDATE clusters SET environment = ?, cluster_type = ?, labels = ?, token_hash = ?, registered_at = ?,
		reported = ?, revision = ?, status = ?, message = ?, observed_at = ?, received_at = ?, gitops_path = ?, fresh = ?, digest = ?
		WHERE name = ?`, c, true)
}

func (t *tx) writeCluster(ctx context.Context, query string, c hub.ClusterRecord, nameLast bool) error {
	labels, err := json.Marshal(nonNilLabels(c.Labels))
	if err != nil {
		return err
	}
	args := []any{c.Environment, c.ClusterType, string(labels), c.TokenHash, ms(c.RegisteredAt), boolInt(c.Reported),
		c.Revision, string(c.Status), c.Message, ms(c.ObservedAt), ms(c.ReceivedAt), c.GitOpsPath, boolInt(c.Fresh), c.Digest}
	if nameLast {
		args = append(args, c.Name)
	} else {
		args = append([]any{c.Name}, args...)
	}
	_, err = t.q.ExecContext(ctx, query, args...)
	return err
}

func nonNilLabels(l map[string]string) map[string]string {
	if l == nil {
		return map[string]string{}
	}
	return l
}

func (t *tx) TouchCluster(ctx context.Context, name string, observedAt, receivedAt time.Time) error {
	_, err := t.q.ExecContext(ctx, `UPDATE clusters SET observed_at = ?, received_at = ? WHERE name = ?`, ms(observedAt), ms(receivedAt), name)
	return err
}

func (t *tx) Deployments(ctx context.Context, cluster string) ([]hub.DeploymentState, error) {
	rows, err := t.q.QueryContext(ctx, `SELECT deployment_target, namespace, status, revision, since FROM deployments
		WHERE cluster = ? ORDER BY deployment_target`, cluster)
	if err != nil {
		return nil, err
	}
	defer func() { _ = rows.Close() }()
	var out []hub.DeploymentState
	for rows.Next() {
		var d hub.DeploymentState
		var since int64
		if err := rows.Scan(&d.DeploymentTarget, &d.Namespace, &d.Status, &d.Revision, &since); err != nil {
			return nil, err
		}
		d.Since = fromMS(since)
		out = append(out, d)
	}
	return out, rows.Err()
}

func (t *tx) SetDeployments(ctx context.Context, cluster string, put []hub.DeploymentState, remove []string) error {
	for _, d := range put {
		if _, err := t.q.ExecContext(ctx, `INSERT INTO deployments (cluster, deployment_target, namespace, status, revision, since)
			VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (cluster, deployment_target) DO UPDATE SET namespace = excluded.namespace,
			status = excluded.status, revision = excluded.revision, since = excluded.since`,
			cluster, d.DeploymentTarget, d.Namespace, string(d.Status), d.Revision, ms(d.Since)); err != nil {
			return err
		}
	}
	for _, dt := range remove {
		if _, err := t.q.ExecContext(ctx, `DELETE FROM deployments WHERE cluster = ? AND deployment_target = ?`, cluster, dt); err != nil {
			return err
		}
	}
	return nil
}

func (t *tx) FailingDeployments(ctx context.Context, env string) ([]hub.ClusterDeployment, error) {
	rows, err := t.q.QueryContext(ctx, `SELECT c.name, c.cluster_type, d.deployment_target, d.namespace, d.status, d.revision, d.since
		FROM deployments d JOIN clusters c ON c.name = d.cluster
		WHERE d.status = 'Failed' AND c.environment = ? ORDER BY c.name, d.deployment_target`, env)
	if err != nil {
		return nil, err
	}
	defer func() { _ = rows.Close() }()
	var out []hub.ClusterDeployment
	for rows.Next() {
		var d hub.ClusterDeployment
		var since int64
		if err := rows.Scan(&d.Cluster, &d.ClusterType, &d.DeploymentTarget, &d.Namespace, &d.Status, &d.Revision, &since); err != nil {
			return nil, err
		}
		d.Since = fromMS(since)
		out = append(out, d)
	}
	return out, rows.Err()
}

func (t *tx) StaleClusters(ctx context.Context, cutoff time.Time, limit int) ([]string, error) {
	return t.strings(ctx, `SELECT name FROM clusters WHERE fresh = 1 AND received_at < ? ORDER BY received_at LIMIT ?`, ms(cutoff), limit)
}

func (t *tx) Environments(ctx context.Context) ([]string, error) {
	return t.strings(ctx, `SELECT environment FROM clusters UNION SELECT environment FROM desired ORDER BY 1`)
}

func (t *tx) strings(ctx context.Context, query string, args ...any) ([]string, error) {
	rows, err := t.q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer func() { _ = rows.Close() }()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, rows.Err()
}
