package sqlite

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/fleetform/fleetform/internal/hub"
)

func (t *tx) AddCounts(ctx context.Context, targets []hub.TargetCount, clusters []hub.ClusterCount) error {
	for _, c := range targets {
		if _, err := t.q.ExecContext(ctx, `INSERT INTO target_counts (environment, revision, cluster_type, deployment_target, state, count)
			VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (environment, revision, cluster_type, deployment_target, state)
			DO UPDATE SET count = count + excluded.count`, c.Environment, c.Revision, c.ClusterType, c.DeploymentTarget, string(c.State), c.Count); err != nil {
			return err
		}
	}
	for _, c := range clusters {
		if _, err := t.q.ExecContext(ctx, `INSERT INTO cluster_counts (environment, cluster_type, revision, count) VALUES (?, ?, ?, ?)
			ON CONFLICT (environment, cluster_type, revision) DO UPDATE SET count = count + excluded.count`,
			c.Environment, c.ClusterType, c.Revision, c.Count); err != nil {
			return err
		}
	}
	if len(clusters) > 0 {
		if _, err := t.q.ExecContext(ctx, `DELETE FROM cluster_counts WHERE count = 0`); err != nil {
			return err
		}
	}
	return nil
}

func (t *tx) DeleteTargetCounts(ctx context.Context, env, revision string) error {
	_, err := t.q.ExecContext(ctx, `DELETE FROM target_counts WHERE environment = ? AND revision = ?`, env, revision)
	return err
}

func (t *tx) TargetCounts(ctx context.Context, env, revision string) ([]hub.TargetCount, error) {
	rows, err := t.q.QueryContext(ctx, `SELECT cluster_type, deployment_target, state, count FROM target_counts
		WHERE environment = ? AND revision = ? AND count <> 0`, env, revision)
	if err != nil {
		return nil, err
	}
	defer func() { _ = rows.Close() }()
	var out []hub.TargetCount
	for rows.Next() {
		c := hub.TargetCount{Environment: env, Revision: revision}
		if err := rows.Scan(&c.ClusterType, &c.DeploymentTarget, &c.State, &c.Count); err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

func (t *tx) ClusterCounts(ctx context.Context, env string) ([]hub.ClusterCount, error) {
	rows, err := t.q.QueryContext(ctx, `SELECT cluster_type, revision, count FROM cluster_counts WHERE environment = ? AND count <> 0`, env)
	if err != nil {
		return nil, err
	}
	defer func() { _ = rows.Close() }()
	var out []hub.ClusterCount
	for rows.Next() {
		c := hub.ClusterCount{Environment: env}
		if err := rows.Scan(&c.ClusterType, &c.Revision, &c.Count); err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

func (t *tx) AddEvents(ctx context.Context, events []hub.Event) error {
	for _, e := range events {
		actor, names, groups, err := hub.ActorColumns(e.Actor)
		if err != nil {
			return err
		}
		if _, err := t.q.ExecContext(ctx, `INSERT INTO events (time, kind, environment, cluster_type, cluster, workload,
			deployment_target, revision, from_state, to_state, message, actor, actor_names, actor_groups)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			ms(e.Time), e.Kind, e.Environment, e.ClusterType, e.Cluster, e.Workload, e.DeploymentTarget, e.Revision,
			e.From, e.To, e.Message, actor, names, groups); err != nil {
			return err
		}
	}
	return nil
}

// historyQuery is the query of History(f) and its arguments. A cluster's events are read
// through events_by_cluster: with a cluster in the filter, the other columns are compared as
// +column, which SQLite never answers from an index, so that the planner (which has no
// statistics) cannot prefer events_environment and walk a whole environment's history.
func historyQuery(f hub.HistoryFilter) (string, []any) {
	q := `SELECT id, time, kind, environment, cluster_type, cluster, workload, deployment_target, revision, from_state,
		to_state, message, actor FROM events WHERE time >= ?`
	args := []any{ms(f.Since)}
	col := func(c string) string {
		if f.Cluster != "" && c != "cluster" {
			return "+" + c
		}
		return c
	}
	for _, c := range []struct{ col, val string }{{"environment", f.Environment}, {"workload", f.Workload},
		{"cluster_type", f.ClusterType}, {"cluster", f.Cluster}, {"revision", f.Revision}} {
		if c.val != "" {
			q += ` AND ` + col(c.col) + ` = ?`
			args = append(args, c.val)
		}
	}
	if kinds := hub.Kinds(f.Kind); len(kinds) > 0 {
		q += ` AND ` + col("kind") + ` IN (?` + strings.Repeat(", ?", len(kinds)-1) + `)`
		for _, k := range kinds {
			args = append(args, k)
		}
	}
	for _, c := range []struct{ col, val string }{{"actor_names", f.Actor}, {"actor_groups", f.Group}} {
		if c.val != "" {
			q += ` AND instr(` + c.col + `, ?) > 0`
			args = append(args, hub.SearchTerm(c.val))
		}
	}
	return q + ` ORDER BY time DESC, id DESC LIMIT ?`, append(args, f.Limit)
}

func (t *tx) History(ctx context.Context, f hub.HistoryFilter) ([]hub.Event, error) {
	q, args := historyQuery(f)
	rows, err := t.q.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer func() { _ = rows.Close() }()
	var out []hub.Event
	for rows.Next() {
		var e hub.Event
		var at int64
		var actor string
		if err := rows.Scan(&e.ID, &at, &e.Kind, &e.Environment, &e.ClusterType, &e.Cluster, &e.Workload, &e.DeploymentTarget,
			&e.Revision, &e.From, &e.To, &e.Message, &actor); err != nil {
			return nil, err
		}
		e.Time = fromMS(at)
		if e.Actor, err = hub.DecodeActor(actor); err != nil {
			return nil, fmt.Errorf("event %d: actor: %w", e.ID, err)
		}
		out = append(out, e)
	}
	return out, rows.Err()
}

func (t *tx) PruneHistory(ctx context.Context, before time.Time, limit int) (int64, error) {
	res, err := t.q.ExecContext(ctx, `DELETE FROM events WHERE id IN (SELECT id FROM events WHERE time < ? ORDER BY time LIMIT ?)`,
		ms(before), limit)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}
