package postgres

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/fleetform/fleetform/internal/hub"
)

type targetKey struct{ env, revision, clusterType, target, state string }

type clusterKey struct{ env, clusterType, revision string }

// AddCounts sums the deltas in the transaction; they are written at commit (or before a
// counter is read). Keys are cleaned of NUL first (see cleanText), as the rows are: a
// revision read back from the store and the same revision in a report are one counter.
func (t *tx) AddCounts(_ context.Context, targets []hub.TargetCount, clusters []hub.ClusterCount) error {
	for _, c := range targets {
		t.targets[targetKey{cleanText(c.Environment), cleanText(c.Revision), cleanText(c.ClusterType),
			cleanText(c.DeploymentTarget), string(c.State)}] += c.Count
	}
	for _, c := range clusters {
		t.cluster[clusterKey{cleanText(c.Environment), cleanText(c.ClusterType), cleanText(c.Revision)}] += c.Count
	}
	return nil
}

// queueCounts queues the summed counter deltas, in key order (so that concurrent writers lock
// counter rows in the same order), and drops the cluster counters that reach zero.
func (t *tx) queueCounts() {
	tk := slices.SortedFunc(maps.Keys(t.targets), func(a, b targetKey) int {
		return cmp.Or(cmp.Compare(a.env, b.env), cmp.Compare(a.revision, b.revision), cmp.Compare(a.clusterType, b.clusterType),
			cmp.Compare(a.target, b.target), cmp.Compare(a.state, b.state))
	})
	var env, rev, ct, dt, st []string
	var n []int
	for _, k := range tk {
		if d := t.targets[k]; d != 0 {
			env, rev, ct, dt, st, n = append(env, k.env), append(rev, k.revision), append(ct, k.clusterType),
				append(dt, k.target), append(st, k.state), append(n, d)
		}
	}
	if len(n) > 0 {
		t.queue(`INSERT INTO target_counts AS t (environment, revision, cluster_type, deployment_target, state, count)
			SELECT e, r, c, d, s, n FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::int[])
			WITH ORDINALITY AS u(e, r, c, d, s, n, o)
			ORDER BY o
			ON CONFLICT (environment, revision, cluster_type, deployment_target, state) DO UPDATE SET count = t.count + excluded.count`,
			env, rev, ct, dt, st, n)
	}
	ck := slices.SortedFunc(maps.Keys(t.cluster), func(a, b clusterKey) int {
		return cmp.Or(cmp.Compare(a.env, b.env), cmp.Compare(a.clusterType, b.clusterType), cmp.Compare(a.revision, b.revision))
	})
	env, ct, rev, n = nil, nil, nil, nil
	for _, k := range ck {
		if d := t.cluster[k]; d != 0 {
			env, ct, rev, n = append(env, k.env), append(ct, k.clusterType), append(rev, k.revision), append(n, d)
		}
	}
	if len(n) > 0 {
		t.queue(`INSERT INTO cluster_counts AS t (environment, cluster_type, revision, count)
			SELECT e, c, r, n FROM unnest($1::text[], $2::text[], $3::text[], $4::int[]) WITH ORDINALITY AS u(e, c, r, n, o)
			ORDER BY o
			ON CONFLICT (environment, cluster_type, revision) DO UPDATE SET count = t.count + excluded.count`, env, ct, rev, n)
		t.queue(`DELETE FROM cluster_counts t USING unnest($1::text[], $2::text[], $3::text[]) AS u(e, c, r)
			WHERE t.environment = u.e AND t.cluster_type = u.c AND t.revision = u.r AND t.count = 0`, env, ct, rev)
	}
	clear(t.targets)
	clear(t.cluster)
}

func (t *tx) DeleteTargetCounts(ctx context.Context, env, revision string) error {
	t.queueCounts()
	_, err := t.exec(ctx, `DELETE FROM target_counts WHERE environment = $1 AND revision = $2`, env, revision)
	return err
}

func (t *tx) TargetCounts(ctx context.Context, env, revision string) ([]hub.TargetCount, error) {
	t.queueCounts()
	rows, err := t.query(ctx, `SELECT cluster_type, deployment_target, state, count FROM target_counts
		WHERE environment = $1 AND revision = $2 AND count <> 0 ORDER BY cluster_type, deployment_target, state`, env, revision)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (hub.TargetCount, error) {
		c := hub.TargetCount{Environment: env, Revision: revision}
		err := row.Scan(&c.ClusterType, &c.DeploymentTarget, &c.State, &c.Count)
		return c, err
	})
}

func (t *tx) ClusterCounts(ctx context.Context, env string) ([]hub.ClusterCount, error) {
	t.queueCounts()
	rows, err := t.query(ctx, `SELECT cluster_type, revision, count FROM cluster_counts WHERE environment = $1 AND count <> 0
		ORDER BY cluster_type, revision`, env)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (hub.ClusterCount, error) {
		c := hub.ClusterCount{Environment: env}
		err := row.Scan(&c.ClusterType, &c.Revision, &c.Count)
		return c, err
	})
}

// AddEvents appends events with the transaction's next statement (pendingRows).
func (t *tx) AddEvents(_ context.Context, events []hub.Event) error {
	t.pending.events = append(t.pending.events, events...)
	return nil
}

// historyQuery is the query of History(f) and its arguments.
func historyQuery(f hub.HistoryFilter) (string, []any) {
	sql := `SELECT id, time, kind, environment, cluster_type, cluster, workload, deployment_target, revision, from_state,
		to_state, message, actor FROM events WHERE time >= $1`
	args := []any{f.Since}
	for _, c := range []struct{ col, val string }{{"environment", f.Environment}, {"workload", f.Workload},
		{"cluster_type", f.ClusterType}, {"cluster", f.Cluster}, {"revision", f.Revision}} {
		if c.val != "" {
			args = append(args, c.val)
			sql += ` AND ` + c.col + ` = $` + strconv.Itoa(len(args))
		}
	}
	switch kinds := hub.Kinds(f.Kind); len(kinds) {
	case 0:
	case 1:
		args = append(args, kinds[0])
		sql += ` AND kind = $` + strconv.Itoa(len(args))
	default:
		args = append(args, kinds)
		sql += ` AND kind = ANY($` + strconv.Itoa(len(args)) + `::text[])`
	}
	for _, c := range []struct{ col, val string }{{"actor_names", f.Actor}, {"actor_groups", f.Group}} {
		if c.val != "" {
			args = append(args, hub.SearchTerm(c.val))
			sql += ` AND strpos(` + c.col + `, $` + strconv.Itoa(len(args)) + `) > 0`
		}
	}
	args = append(args, f.Limit)
	return sql + ` ORDER BY time DESC, id DESC LIMIT $` + strconv.Itoa(len(args)), args
}

func (t *tx) History(ctx context.Context, f hub.HistoryFilter) ([]hub.Event, error) {
	sql, args := historyQuery(f)
	rows, err := t.query(ctx, sql, args...)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (hub.Event, error) {
		var e hub.Event
		var at pgtype.Timestamptz
		var actor string
		if err := row.Scan(&e.ID, &at, &e.Kind, &e.Environment, &e.ClusterType, &e.Cluster, &e.Workload, &e.DeploymentTarget,
			&e.Revision, &e.From, &e.To, &e.Message, &actor); err != nil {
			return e, err
		}
		e.Time = fromTS(at)
		var err error
		if e.Actor, err = hub.DecodeActor(actor); err != nil {
			return e, fmt.Errorf("event %d: actor: %w", e.ID, err)
		}
		return e, nil
	})
}

func (t *tx) PruneHistory(ctx context.Context, before time.Time, limit int) (int64, error) {
	return t.exec(ctx, `DELETE FROM events WHERE id IN (SELECT id FROM events WHERE time < $1 ORDER BY time LIMIT $2)`, before, limit)
}
