package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/fleetform/fleetform/internal/hub"
)

// tx is a hub transaction. Writes are queued and sent together before the next read or the
// commit; counter deltas are summed until a counter is read or the transaction commits.
//
// In a write transaction, every cluster read is a SELECT … FOR UPDATE, and the transaction
// keeps the clusters it has locked: nobody else can change them until it ends, so reading one
// again (LockCluster after Cluster, as ingest does) costs no round trip.
type tx struct {
	q       querier
	write   bool
	queued  *pgx.Batch
	targets map[targetKey]int
	cluster map[clusterKey]int
	locked  map[string]hub.ClusterRecord
	// deployments are locked clusters' deployment states read ahead (PrefetchDeployments),
	// until the transaction changes them.
	deployments map[string][]hub.DeploymentState
	// txStatus reports the connection's transaction status ('I', 'T' or 'E'), for write
	// transactions that send their own BEGIN and COMMIT (nil otherwise); sent is set once a
	// statement has gone to the server.
	txStatus func() byte
	sent     bool
	// pending are the rows written and not sent yet (see pendingRows).
	pending pendingRows
	// touches are the heartbeat times of clusters, sent as one UPDATE with the next writes.
	touches touchBatch
}

// touchBatch collects TouchCluster calls (the latest per cluster) for one statement.
type touchBatch struct {
	index              map[string]int
	names              []string
	observed, received []time.Time
}

func (b *touchBatch) add(name string, observed, received time.Time) {
	if i, ok := b.index[name]; ok {
		b.observed[i], b.received[i] = observed, received
		return
	}
	if b.index == nil {
		b.index = map[string]int{}
	}
	b.index[name] = len(b.names)
	b.names, b.observed, b.received = append(b.names, name), append(b.observed, observed), append(b.received, received)
}

// drop forgets a cluster's pending touch (a full row update supersedes it).
func (b *touchBatch) drop(name string) {
	if i, ok := b.index[name]; ok {
		b.names[i] = "" // matches no cluster
		delete(b.index, name)
	}
}

var _ hub.Tx = (*tx)(nil)

// querier is what a transaction sends its statements through: a pgx.Tx, or a connection
// whose BEGIN and COMMIT travel with the first and last statements (see Store.update).
type querier interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
	SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults
}

func newTx(q querier, write bool) *tx {
	return &tx{q: q, write: write, queued: &pgx.Batch{}, targets: map[targetKey]int{}, cluster: map[clusterKey]int{},
		locked: map[string]hub.ClusterRecord{}}
}

// queue adds a write to send with the next flush.
func (t *tx) queue(sql string, args ...any) { t.queued.Queue(sql, cleanArgs(args)...) }

// queueTouches queues the pending heartbeat times as one statement.
func (t *tx) queueTouches() {
	b := t.touches
	if len(b.index) == 0 {
		return
	}
	t.touches = touchBatch{}
	t.queue(`UPDATE clusters AS c SET observed_at = v.observed_at, received_at = v.received_at
		FROM unnest($1::text[], $2::timestamptz[], $3::timestamptz[]) AS v(name, observed_at, received_at)
		WHERE c.name = v.name`, b.names, b.observed, b.received)
}

// flushWrites sends the queued writes (not the counters).
func (t *tx) flushWrites(ctx context.Context) error {
	t.queuePending()
	if t.queued.Len() == 0 {
		return nil
	}
	b := t.queued
	t.queued = &pgx.Batch{}
	t.sent = true
	return t.q.SendBatch(ctx, b).Close()
}

// errAborted: a statement of the transaction failed (and its error was not returned by fn),
// so PostgreSQL will not commit it.
var errAborted = errors.New("postgres: an earlier statement of the transaction failed; nothing was committed")

// commit sends the queued writes, the summed counter deltas and COMMIT, in one round trip,
// and checks that PostgreSQL committed: COMMIT in an aborted transaction answers ROLLBACK
// without an error, and one whose BEGIN never ran (a failed batch) would have committed
// statement by statement.
func (t *tx) commit(ctx context.Context) error {
	if t.sent && t.txStatus != nil && t.txStatus() != 'T' {
		return errAborted
	}
	t.queueCounts()
	t.queuePending()
	t.queue(`COMMIT`)
	b := t.queued
	t.queued = &pgx.Batch{}
	t.sent = true
	br := t.q.SendBatch(ctx, b)
	var tag pgconn.CommandTag
	for range b.Len() {
		var err error
		if tag, err = br.Exec(); err != nil {
			_ = br.Close() // returns the same error
			return err
		}
	}
	if err := br.Close(); err != nil {
		return err
	}
	if tag.String() != "COMMIT" {
		return fmt.Errorf("%w (COMMIT answered %s)", errAborted, tag)
	}
	return nil
}

// query runs a query after the queued writes, in the same round trip.
func (t *tx) query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	args = cleanArgs(args)
	t.queuePending()
	t.sent = true
	if t.queued.Len() == 0 {
		return t.q.Query(ctx, sql, args...)
	}
	br, err := t.sendWith(ctx, sql, args)
	if err != nil {
		return nil, err
	}
	rows, err := br.Query()
	if err != nil {
		return nil, errors.Join(err, br.Close())
	}
	return &batchRows{Rows: rows, br: br}, nil
}

// queryRow runs a query returning one row after the queued writes, in the same round trip.
func (t *tx) queryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	args = cleanArgs(args)
	t.queuePending()
	t.sent = true
	if t.queued.Len() == 0 {
		return t.q.QueryRow(ctx, sql, args...)
	}
	br, err := t.sendWith(ctx, sql, args)
	if err != nil {
		return errRow{err}
	}
	return batchRow{row: br.QueryRow(), br: br}
}

// sendWith sends the queued writes followed by a query and reads the writes' results.
func (t *tx) sendWith(ctx context.Context, sql string, args []any) (pgx.BatchResults, error) {
	return t.sendWithQueries(ctx, pgx.QueuedQuery{SQL: sql, Arguments: args})
}

// sendWithQueries sends the queued writes followed by queries and reads the writes' results;
// the queries' results follow, in order.
func (t *tx) sendWithQueries(ctx context.Context, queries ...pgx.QueuedQuery) (pgx.BatchResults, error) {
	b := t.queued
	writes := b.Len()
	t.queued = &pgx.Batch{}
	for _, q := range queries {
		b.Queue(q.SQL, cleanArgs(q.Arguments)...)
	}
	br := t.q.SendBatch(ctx, b)
	for range writes {
		if _, err := br.Exec(); err != nil {
			_ = br.Close() // returns the same error
			return nil, err
		}
	}
	return br, nil
}

// batchRows are a query's rows at the end of a batch; closing them closes the batch.
type batchRows struct {
	pgx.Rows
	br  pgx.BatchResults
	err error
}

// Next closes the batch after the last row, so that Err (which pgx.CollectRows calls before
// Close) reports the batch's error too.
func (r *batchRows) Next() bool {
	if r.Rows.Next() {
		return true
	}
	r.Close()
	return false
}

func (r *batchRows) Close() {
	r.Rows.Close()
	if r.br != nil {
		r.err = r.br.Close()
		r.br = nil
	}
}

func (r *batchRows) Err() error { return errors.Join(r.Rows.Err(), r.err) }

// batchRow is a query's row at the end of a batch; scanning it closes the batch.
type batchRow struct {
	row pgx.Row
	br  pgx.BatchResults
}

func (r batchRow) Scan(dest ...any) error {
	err := r.row.Scan(dest...)
	return errors.Join(err, r.br.Close())
}

// exec flushes the queued writes and runs a statement now, for its row count.
func (t *tx) exec(ctx context.Context, sql string, args ...any) (int64, error) {
	if err := t.flushWrites(ctx); err != nil {
		return 0, err
	}
	t.sent = true
	tag, err := t.q.Exec(ctx, sql, cleanArgs(args)...)
	return tag.RowsAffected(), err
}

type errRow struct{ err error }

func (r errRow) Scan(...any) error { return r.err }

// ts is a time parameter: NULL for the zero time.
func ts(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t
}

// fromTS is a scanned time: the zero time for NULL, UTC otherwise.
func fromTS(v pgtype.Timestamptz) time.Time {
	if !v.Valid {
		return time.Time{}
	}
	return v.Time.UTC()
}

func notFound(err error) error {
	if errors.Is(err, pgx.ErrNoRows) {
		return hub.ErrNotFound
	}
	return err
}

// LockEnvironment takes a transaction-scoped advisory lock on the environment's name. The
// lock is queued: it is taken before the transaction's next statement runs, in the same round
// trip.
func (t *tx) LockEnvironment(_ context.Context, env string, exclusive bool) error {
	sql := `SELECT pg_advisory_xact_lock_shared($1, hashtext($2))`
	if exclusive {
		sql = `SELECT pg_advisory_xact_lock($1, hashtext($2))`
	}
	t.queue(sql, lockClassEnvironment, env)
	return nil
}

const clusterColumns = `name, environment, cluster_type, labels, token_hash, registered_at, reported, revision, status,
	message, observed_at, received_at, gitops_path, fresh, digest`

func scanCluster(row pgx.Row) (hub.ClusterRecord, error) {
	var c hub.ClusterRecord
	var labels []byte
	var registered, observed, received pgtype.Timestamptz
	err := row.Scan(&c.Name, &c.Environment, &c.ClusterType, &labels, &c.TokenHash, &registered, &c.Reported, &c.Revision,
		&c.Status, &c.Message, &observed, &received, &c.GitOpsPath, &c.Fresh, &c.Digest)
	if err != nil {
		return c, notFound(err)
	}
	if err := json.Unmarshal(labels, &c.Labels); err != nil {
		return c, err
	}
	c.RegisteredAt, c.ObservedAt, c.ReceivedAt = fromTS(registered), fromTS(observed), fromTS(received)
	return c, nil
}

// Cluster reads a cluster; in a write transaction, it locks it (see LockCluster).
func (t *tx) Cluster(ctx context.Context, name string) (hub.ClusterRecord, error) {
	if t.write {
		return t.LockCluster(ctx, name)
	}
	return scanCluster(t.queryRow(ctx, `SELECT `+clusterColumns+` FROM clusters WHERE name = $1`, name))
}

// LockCluster reads a cluster with SELECT … FOR UPDATE, once per transaction.
func (t *tx) LockCluster(ctx context.Context, name string) (hub.ClusterRecord, error) {
	if c, ok := t.locked[name]; ok {
		return c, nil
	}
	c, err := scanCluster(t.queryRow(ctx, `SELECT `+clusterColumns+` FROM clusters WHERE name = $1 FOR UPDATE`, name))
	if err == nil {
		t.locked[name] = c
	}
	return c, err
}

// ClusterEnvironments reads the environments of the named clusters in one round trip,
// without locking them (a cluster's environment never changes); unregistered names are
// left out.
func (t *tx) ClusterEnvironments(ctx context.Context, names []string) (map[string]string, error) {
	rows, err := t.query(ctx, `SELECT name, environment FROM clusters WHERE name = ANY ($1::text[])`, names)
	if err != nil {
		return nil, err
	}
	type pair struct{ name, env string }
	pairs, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (pair, error) {
		var p pair
		err := row.Scan(&p.name, &p.env)
		return p, err
	})
	if err != nil {
		return nil, err
	}
	out := make(map[string]string, len(pairs))
	for _, p := range pairs {
		out[p.name] = p.env
	}
	return out, nil
}

// LockClusters locks the named clusters in one round trip (in name order, as every writer
// does), keeps them for LockCluster and returns the registered ones in the order of names.
func (t *tx) LockClusters(ctx context.Context, names []string) ([]hub.ClusterRecord, error) {
	var todo []string
	for _, n := range names {
		if _, ok := t.locked[n]; !ok {
			todo = append(todo, n)
		}
	}
	if len(todo) > 0 {
		rows, err := t.query(ctx, `SELECT `+clusterColumns+` FROM clusters WHERE name = ANY ($1::text[]) ORDER BY name FOR UPDATE`, todo)
		if err != nil {
			return nil, err
		}
		if err := t.keepClusters(rows); err != nil {
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

func (t *tx) Clusters(ctx context.Context, env string) ([]hub.ClusterRecord, error) {
	sql := `SELECT ` + clusterColumns + ` FROM clusters`
	var args []any
	if env != "" {
		sql += ` WHERE environment = $1`
		args = append(args, env)
	}
	rows, err := t.query(ctx, sql+` ORDER BY name`, args...)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (hub.ClusterRecord, error) { return scanCluster(row) })
}

// clusterWhere is the condition of a cluster search and its arguments.
func clusterWhere(f hub.ClusterFilter) (string, []any) {
	conds, args := []string{"true"}, []any{}
	add := func(cond string, a ...any) {
		for _, v := range a {
			args = append(args, v)
			cond = strings.Replace(cond, "?", fmt.Sprintf("$%d", len(args)), 1)
		}
		conds = append(conds, cond)
	}
	if f.Environment != "" {
		add("environment = ?", f.Environment)
	}
	if f.ClusterType != "" {
		add("cluster_type = ?", f.ClusterType)
	}
	if f.Name != "" {
		add("strpos(lower(name), ?) > 0", strings.ToLower(f.Name))
	}
	switch f.State {
	case "":
	case string(hub.StateUnknown):
		add("NOT (reported AND fresh)")
	default:
		add("reported AND fresh AND status = ?", f.State)
	}
	if f.LabelKey != "" {
		add("labels ->> ? = ?", f.LabelKey, f.LabelValue)
	}
	return strings.Join(conds, " AND "), args
}

func (t *tx) SearchClusters(ctx context.Context, f hub.ClusterFilter, offset, limit int) ([]hub.ClusterRecord, int, error) {
	where, args := clusterWhere(f)
	var total int
	if err := t.queryRow(ctx, `SELECT count(*) FROM clusters WHERE `+where, args...).Scan(&total); err != nil {
		return nil, 0, err
	}
	n := len(args)
	rows, err := t.query(ctx, fmt.Sprintf(`SELECT `+clusterColumns+` FROM clusters WHERE `+where+` ORDER BY `+f.OrderBy()+` LIMIT $%d OFFSET $%d`, n+1, n+2),
		append(args, limit, offset)...)
	if err != nil {
		return nil, 0, err
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (hub.ClusterRecord, error) { return scanCluster(row) })
	return out, total, err
}

// InsertClusters adds clusters in one statement, in name order; a concurrent registration
// of one of the names waits for the other transaction and then finds the name taken.
func (t *tx) InsertClusters(ctx context.Context, cs ...hub.ClusterRecord) error {
	rows := make([]pendingCluster, len(cs))
	for i, c := range cs {
		raw, err := labelsJSON(c.Labels)
		if err != nil {
			return err
		}
		rows[i] = pendingCluster{ClusterRecord: c, labels: raw}
	}
	slices.SortFunc(rows, func(a, b pendingCluster) int { return strings.Compare(a.Name, b.Name) })
	n, err := t.exec(ctx, `INSERT INTO clusters (`+clusterColumns+`) SELECT * FROM `+clusterValues+`
		ON CONFLICT (name) DO NOTHING`, clusterArrays(rows)...)
	switch {
	case err != nil:
		return err
	case n < int64(len(cs)):
		return hub.ErrExists
	}
	for _, c := range cs {
		t.locked[c.Name] = asStored(c) // inserted rows are locked until the transaction ends
	}
	return nil
}

// UpdateCluster writes a cluster row with the transaction's next statement (pendingRows).
func (t *tx) UpdateCluster(_ context.Context, c hub.ClusterRecord) error {
	raw, err := labelsJSON(c.Labels)
	if err != nil {
		return err
	}
	t.touches.drop(c.Name)
	t.pending.putCluster(pendingCluster{ClusterRecord: c, labels: raw})
	t.locked[c.Name] = asStored(c)
	return nil
}

// labelsJSON is the labels column of a cluster: a JSON object, {} for none.
func labelsJSON(labels map[string]string) (string, error) {
	if labels == nil {
		labels = map[string]string{}
	}
	return marshalJSON(labels)
}

// asStored is a cluster as reading it back returns it: times in UTC, to the microsecond.
func asStored(c hub.ClusterRecord) hub.ClusterRecord {
	c.RegisteredAt, c.ObservedAt, c.ReceivedAt = storedTime(c.RegisteredAt), storedTime(c.ObservedAt), storedTime(c.ReceivedAt)
	if c.Labels == nil {
		c.Labels = map[string]string{}
	}
	return c
}

// storedTime is a time as timestamptz keeps it.
func storedTime(t time.Time) time.Time {
	if t.IsZero() {
		return t
	}
	return t.Truncate(time.Microsecond).UTC()
}

func (t *tx) TouchCluster(_ context.Context, name string, observedAt, receivedAt time.Time) error {
	t.touches.add(name, storedTime(observedAt), storedTime(receivedAt))
	if c, ok := t.locked[name]; ok {
		c.ObservedAt, c.ReceivedAt = observedAt, receivedAt
		t.locked[name] = asStored(c)
	}
	return nil
}

// TouchUnchanged locks clusters in name order, as LockClusters does, and records the
// heartbeats in one statement, sent with the lock: it sets a heartbeat's times only where the
// stored cluster is reported, fresh, of the heartbeat's digest, and superseded by it (observed
// after it, or the stored time is after the heartbeat's SkewLimit). The clusters of no
// heartbeat are read in the same round trip, for LockClusters. It reports which heartbeats it
// recorded; the caller decides the others by reading their clusters (locked already). The
// times are compared at the stored precision, never in a heartbeat's favour.
func (t *tx) TouchUnchanged(ctx context.Context, clusters []string, hs []hub.Heartbeat) ([]bool, error) {
	names, digests := make([]string, len(hs)), make([]string, len(hs))
	observed, received, limits := make([]time.Time, len(hs)), make([]time.Time, len(hs)), make([]time.Time, len(hs))
	for i, h := range hs {
		names[i], digests[i] = h.Cluster, h.Digest
		observed[i], received[i], limits[i] = storedTime(h.ObservedAt), storedTime(h.ReceivedAt), storedTime(h.SkewLimit)
	}
	index := make(map[string]int, len(names))
	for i, name := range names {
		index[name] = i
	}
	others := slices.DeleteFunc(slices.Clone(clusters), func(c string) bool { _, ok := index[c]; return ok })
	t.queue(`SELECT name FROM clusters WHERE name = ANY ($1::text[]) ORDER BY name FOR UPDATE`, clusters)
	t.queuePending()
	t.sent = true
	br, err := t.sendWithQueries(ctx, pgx.QueuedQuery{SQL: `UPDATE clusters AS c SET observed_at = v.observed_at, received_at = v.received_at
		FROM unnest($1::text[], $2::text[], $3::timestamptz[], $4::timestamptz[], $5::timestamptz[])
			AS v(name, digest, observed_at, received_at, skew_limit)
		WHERE c.name = v.name AND c.reported AND c.fresh AND c.digest = v.digest
			AND (c.observed_at < v.observed_at OR c.observed_at > v.skew_limit)
		RETURNING c.name`, Arguments: []any{names, digests, observed, received, limits}},
		pgx.QueuedQuery{SQL: `SELECT ` + clusterColumns + ` FROM clusters WHERE name = ANY ($1::text[]) ORDER BY name`, Arguments: []any{others}})
	if err != nil {
		return nil, err
	}
	done := make([]bool, len(hs))
	if err := t.readTouches(br, index, done); err != nil {
		return nil, errors.Join(err, br.Close())
	}
	return done, br.Close()
}

// readTouches reads the results of TouchUnchanged's statements: which heartbeats were
// recorded (done, by index: the heartbeat of each cluster), and the other clusters, kept as
// LockClusters keeps them.
func (t *tx) readTouches(br pgx.BatchResults, index map[string]int, done []bool) error {
	rows, err := br.Query()
	if err != nil {
		return err
	}
	touched, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return err
	}
	for _, name := range touched {
		if i, ok := index[name]; ok {
			done[i] = true
			delete(t.locked, name)
		}
	}
	if rows, err = br.Query(); err != nil {
		return err
	}
	return t.keepClusters(rows)
}

// keepClusters reads rows of clusterColumns and keeps the clusters for LockCluster and
// LockClusters (the transaction has them locked).
func (t *tx) keepClusters(rows pgx.Rows) error {
	cs, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (hub.ClusterRecord, error) { return scanCluster(row) })
	if err != nil {
		return err
	}
	for _, c := range cs {
		t.locked[c.Name] = c
	}
	return nil
}

func (t *tx) Deployments(ctx context.Context, cluster string) ([]hub.DeploymentState, error) {
	if deps, ok := t.deployments[cluster]; ok {
		return slices.Clone(deps), nil
	}
	rows, err := t.query(ctx, `SELECT deployment_target, namespace, status, revision, since FROM deployments
		WHERE cluster = $1 ORDER BY deployment_target`, cluster)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (hub.DeploymentState, error) {
		var d hub.DeploymentState
		err := scanDeployment(row, &d)
		return d, err
	})
}

// PrefetchDeployments reads the deployment states of clusters this transaction has locked, in
// one round trip, for the Deployments calls that follow.
func (t *tx) PrefetchDeployments(ctx context.Context, clusters []string) error {
	if !t.write {
		return nil // unlocked rows could change under a read-ahead
	}
	rows, err := t.query(ctx, `SELECT cluster, deployment_target, namespace, status, revision, since FROM deployments
		WHERE cluster = ANY ($1::text[]) ORDER BY cluster, deployment_target`, clusters)
	if err != nil {
		return err
	}
	type owned struct {
		cluster string
		hub.DeploymentState
	}
	all, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (owned, error) {
		var d owned
		err := scanDeployment(row, &d.DeploymentState, &d.cluster)
		return d, err
	})
	if err != nil {
		return err
	}
	if t.deployments == nil {
		t.deployments = map[string][]hub.DeploymentState{}
	}
	for _, c := range clusters {
		t.deployments[c] = []hub.DeploymentState{}
	}
	for _, d := range all {
		t.deployments[d.cluster] = append(t.deployments[d.cluster], d.DeploymentState)
	}
	return nil
}

// scanDeployment scans a deployment row; leading are the columns before its own.
func scanDeployment(row pgx.Row, d *hub.DeploymentState, leading ...any) error {
	var since pgtype.Timestamptz
	err := row.Scan(append(leading, &d.DeploymentTarget, &d.Namespace, &d.Status, &d.Revision, &since)...)
	d.Since = fromTS(since)
	return err
}

// SetDeployments writes a cluster's deployment rows with the transaction's next statement
// (pendingRows).
func (t *tx) SetDeployments(_ context.Context, cluster string, put []hub.DeploymentState, remove []string) error {
	delete(t.deployments, cluster)
	t.pending.setDeployments(cluster, put, remove)
	return nil
}

func (t *tx) FailingDeployments(ctx context.Context, env string) ([]hub.ClusterDeployment, error) {
	rows, err := t.query(ctx, `SELECT c.name, c.cluster_type, d.deployment_target, d.namespace, d.status, d.revision, d.since
		FROM deployments d JOIN clusters c ON c.name = d.cluster
		WHERE d.status = 'Failed' AND c.environment = $1 ORDER BY c.name, d.deployment_target`, env)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (hub.ClusterDeployment, error) {
		var d hub.ClusterDeployment
		err := scanDeployment(row, &d.DeploymentState, &d.Cluster, &d.ClusterType)
		return d, err
	})
}

// StaleClusters reads the limit+1 oldest fresh clusters: one pass over the table, as the
// stale ones alone would cost (no index on received_at, which every report changes: see
// migration 0004).
func (t *tx) StaleClusters(ctx context.Context, cutoff time.Time, limit int) ([]string, time.Time, error) {
	rows, err := t.query(ctx, `SELECT name, received_at FROM clusters WHERE fresh ORDER BY received_at, name LIMIT $1`, limit+1)
	if err != nil {
		return nil, time.Time{}, err
	}
	scan := hub.StaleScan{Cutoff: cutoff, Limit: limit}
	var name string
	var received pgtype.Timestamptz
	_, err = pgx.ForEachRow(rows, []any{&name, &received}, func() error {
		scan.Add(name, fromTS(received))
		return nil
	})
	return scan.Stale, scan.Next, err
}

func (t *tx) Environments(ctx context.Context) ([]string, error) {
	return t.strings(ctx, environmentsSQL)
}

func (t *tx) strings(ctx context.Context, sql string, args ...any) ([]string, error) {
	rows, err := t.query(ctx, sql, args...)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[string])
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
