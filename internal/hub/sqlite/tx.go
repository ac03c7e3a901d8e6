package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"strings"
	"time"

	"github.com/fleetform/fleetform/internal/hub"
)

// querier is what a transaction offers.
type querier interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// tx is a hub transaction. In a write transaction, clusters read with LockClusters or
// LockCluster are kept until the transaction writes them: SQLite has one writer, so nobody
// else can change them meanwhile, and reading one again costs nothing.
type tx struct {
	q      querier
	locked map[string]hub.ClusterRecord
}

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

// LockCluster reads a cluster, once until the transaction writes it; the write transaction
// (BEGIN IMMEDIATE) already excludes other writers.
func (t *tx) LockCluster(ctx context.Context, name string) (hub.ClusterRecord, error) {
	if c, ok := t.locked[name]; ok {
		return c, nil
	}
	c, err := t.Cluster(ctx, name)
	if err == nil {
		t.keep(c)
	}
	return c, err
}

// keep remembers a cluster read in the transaction.
func (t *tx) keep(c hub.ClusterRecord) {
	if t.locked == nil {
		t.locked = map[string]hub.ClusterRecord{}
	}
	t.locked[c.Name] = c
}

// LockClusters reads the named clusters that LockCluster has not read yet in one query,
// keeps them for LockCluster, and returns the registered ones in the order of names.
func (t *tx) LockClusters(ctx context.Context, names []string) ([]hub.ClusterRecord, error) {
	var todo []string
	for _, n := range names {
		if _, ok := t.locked[n]; !ok {
			todo = append(todo, n)
		}
	}
	if len(todo) > 0 {
		if err := t.readClusters(ctx, todo); err != nil {
			return nil, err
		}
	}
	out := make([]hub.ClusterRecord, 0, len(names))
	for _, n := range names {
		if c, ok := t.locked[n]; ok {
			out = append(out, c)
		}
	}
	return out, nil
}

// readClusters reads the named clusters in one query and keeps them.
func (t *tx) readClusters(ctx context.Context, names []string) error {
	rows, err := t.queryNames(ctx, `SELECT `+clusterColumns+` FROM clusters WHERE name IN (SELECT value FROM json_each(?))`, names)
	if err != nil {
		return err
	}
	defer func() { _ = rows.Close() }()
	for rows.Next() {
		c, err := scanCluster(rows)
		if err != nil {
			return err
		}
		t.keep(c)
	}
	return rows.Err()
}

// ClusterEnvironments reads the environments of the named clusters in one query.
func (t *tx) ClusterEnvironments(ctx context.Context, names []string) (map[string]string, error) {
	rows, err := t.queryNames(ctx, `SELECT name, environment FROM clusters WHERE name IN (SELECT value FROM json_each(?))`, names)
	if err != nil {
		return nil, err
	}
	defer func() { _ = rows.Close() }()
	out := make(map[string]string, len(names))
	for rows.Next() {
		var name, env string
		if err := rows.Scan(&name, &env); err != nil {
			return nil, err
		}
		out[name] = env
	}
	return out, rows.Err()
}

// queryNames runs a query whose one parameter is a list of names (a JSON array).
func (t *tx) queryNames(ctx context.Context, query string, names []string) (*sql.Rows, error) {
	list, err := json.Marshal(names)
	if err != nil {
		return nil, err
	}
	return t.q.QueryContext(ctx, query, string(list))
}

// PrefetchDeployments does nothing: Deployments reads the local file, with no round trip to
// save.
func (t *tx) PrefetchDeployments(context.Context, []string) error { return nil }

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

// clusterWhere is the condition of a cluster search and its arguments.
func clusterWhere(f hub.ClusterFilter) (string, []any) {
	conds, args := []string{"true"}, []any{}
	add := func(cond string, a ...any) { conds, args = append(conds, cond), append(args, a...) }
	if f.Environment != "" {
		add("environment = ?", f.Environment)
	}
	if f.ClusterType != "" {
		add("cluster_type = ?", f.ClusterType)
	}
	if f.Name != "" {
		add("instr(lower(name), ?) > 0", strings.ToLower(f.Name))
	}
	switch f.State {
	case "":
	case string(hub.StateUnknown):
		add("(reported = 0 OR fresh = 0)")
	default:
		add("reported = 1 AND fresh = 1 AND status = ?", f.State)
	}
	if f.LabelKey != "" {
		add("json_extract(labels, ?) = ?", `$."`+f.LabelKey+`"`, f.LabelValue) // the key is a label key: no quote in it
	}
	return strings.Join(conds, " AND "), args
}

func (t *tx) SearchClusters(ctx context.Context, f hub.ClusterFilter, offset, limit int) ([]hub.ClusterRecord, int, error) {
	where, args := clusterWhere(f)
	var total int
	if err := t.q.QueryRowContext(ctx, `SELECT count(*) FROM clusters WHERE `+where, args...).Scan(&total); err != nil {
		return nil, 0, err
	}
	rows, err := t.q.QueryContext(ctx, `SELECT `+clusterColumns+` FROM clusters WHERE `+where+` ORDER BY `+f.OrderBy()+` LIMIT ? OFFSET ?`,
		append(args, limit, offset)...)
	if err != nil {
		return nil, 0, err
	}
	defer func() { _ = rows.Close() }()
	var out []hub.ClusterRecord
	for rows.Next() {
		c, err := scanCluster(rows)
		if err != nil {
			return nil, 0, err
		}
		out = append(out, c)
	}
	return out, total, rows.Err()
}

// InsertClusters adds clusters one statement at a time: SQLite runs in the process, so a
// statement costs no round trip.
func (t *tx) InsertClusters(ctx context.Context, cs ...hub.ClusterRecord) error {
	for _, c := range cs {
		if _, err := t.Cluster(ctx, c.Name); err == nil {
			return hub.ErrExists
		}
		if err := t.writeCluster(ctx, `INSERT INTO clusters (`+clusterColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, c, false); err != nil {
			return err
		}
	}
	return nil
}

func (t *tx) UpdateCluster(ctx context.Context, c hub.ClusterRecord) error {
	return t.writeCluster(ctx, `UPDATE clusters SET environment = ?, cluster_type = ?, labels = ?, token_hash = ?, registered_at = ?,
		reported = ?, revision = ?, status = ?, message = ?, observed_at = ?, received_at = ?, gitops_path = ?, fresh = ?, digest = ?
		WHERE name = ?`, c, true)
}

func (t *tx) writeCluster(ctx context.Context, query string, c hub.ClusterRecord, nameLast bool) error {
	delete(t.locked, c.Name)
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
	delete(t.locked, name)
	_, err := t.q.ExecContext(ctx, `UPDATE clusters SET observed_at = ?, received_at = ? WHERE name = ?`, ms(observedAt), ms(receivedAt), name)
	return err
}

// TouchUnchanged records heartbeats without reading their clusters, one statement each (the
// write transaction excludes other writers: no cluster needs a lock). It sets the times of a
// heartbeat's cluster only where the stored cluster is reported, fresh, of the heartbeat's
// digest, and superseded by it (observed after it, or the stored time is after the
// heartbeat's SkewLimit). It reports which it recorded; the caller decides the others by
// reading their clusters. The times are compared at the stored precision (milliseconds),
// never in a heartbeat's favour.
func (t *tx) TouchUnchanged(ctx context.Context, _ []string, hs []hub.Heartbeat) ([]bool, error) {
	done := make([]bool, len(hs))
	for i, h := range hs {
		res, err := t.q.ExecContext(ctx, `UPDATE clusters SET observed_at = ?, received_at = ?
			WHERE name = ? AND reported = 1 AND fresh = 1 AND digest = ? AND (observed_at < ? OR observed_at > ?)`,
			ms(h.ObservedAt), ms(h.ReceivedAt), h.Cluster, h.Digest, ms(h.ObservedAt), ms(h.SkewLimit))
		if err != nil {
			return nil, err
		}
		n, err := res.RowsAffected()
		if err != nil {
			return nil, err
		}
		if done[i] = n == 1; done[i] {
			delete(t.locked, h.Cluster)
		}
	}
	return done, nil
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

// StaleClusters reads the limit+1 oldest fresh clusters through clusters_fresh.
func (t *tx) StaleClusters(ctx context.Context, cutoff time.Time, limit int) ([]string, time.Time, error) {
	rows, err := t.q.QueryContext(ctx, `SELECT name, received_at FROM clusters WHERE fresh = 1 ORDER BY received_at LIMIT ?`, limit+1)
	if err != nil {
		return nil, time.Time{}, err
	}
	defer func() { _ = rows.Close() }()
	scan := hub.StaleScan{Cutoff: cutoff, Limit: limit}
	for rows.Next() {
		var name string
		var received int64
		if err := rows.Scan(&name, &received); err != nil {
			return nil, time.Time{}, err
		}
		scan.Add(name, fromMS(received))
	}
	return scan.Stale, scan.Next, rows.Err()
}

func (t *tx) Environments(ctx context.Context) ([]string, error) {
	return t.strings(ctx, environmentsSQL)
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

// environmentsSQL lists the environments with clusters or desired states. The clusters'
// environments are found by a loose index scan of clusters_environment (one index lookup
// per environment: each step looks up the next name), not by reading a million cluster rows.
const environmentsSQL = `WITH RECURSIVE envs(environment) AS (
	SELECT (SELECT environment FROM clusters ORDER BY environment LIMIT 1)
	UNION ALL
	SELECT (SELECT c.environment FROM clusters c WHERE c.environment > envs.environment ORDER BY c.environment LIMIT 1)
	FROM envs WHERE envs.environment IS NOT NULL
)
SELECT environment FROM envs WHERE environment IS NOT NULL
UNION
SELECT environment FROM desired
ORDER BY 1`
