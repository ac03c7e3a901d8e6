package postgres

import (
	"context"
	"encoding/json"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/fleetform/fleetform/internal/hub"
)

func (t *tx) PutDesired(_ context.Context, d hub.Desired) error {
	t.queue(`DELETE FROM desired_assignments WHERE environment = $1 AND revision = $2`, d.Environment, d.Revision)
	t.queue(`INSERT INTO desired (environment, revision, gitops_repo, branch, posted_at, promoted_commit)
		VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (environment, revision) DO UPDATE SET gitops_repo = excluded.gitops_repo,
		branch = excluded.branch, posted_at = excluded.posted_at, promoted_commit = excluded.promoted_commit`,
		d.Environment, d.Revision, d.GitOpsRepo, d.Branch, d.PostedAt, d.PromotedCommit)
	if len(d.Assignments) == 0 {
		return nil
	}
	n := len(d.Assignments)
	types, targets, workloads, namespaces, manifests, configs, waiting := make([]string, n), make([]string, n), make([]string, n),
		make([]string, n), make([]string, n), make([]string, n), make([]string, n)
	for i, a := range d.Assignments {
		m, err := marshalJSON(a.Manifests)
		if err != nil {
			return err
		}
		c, err := marshalJSON(a.Config)
		if err != nil {
			return err
		}
		w, err := hub.EncodeWaiting(a.Waiting)
		if err != nil {
			return err
		}
		types[i], targets[i], workloads[i], namespaces[i], manifests[i], configs[i], waiting[i] = a.ClusterType, a.DeploymentTarget,
			a.Workload, a.Namespace, m, c, w
	}
	t.queue(`INSERT INTO desired_assignments (environment, revision, cluster_type, deployment_target, workload, namespace,
		manifests, config, waiting)
		SELECT $1, $2, u.ct, u.dt, u.w, u.ns, u.m::jsonb, u.c::jsonb, u.wt
		FROM unnest($3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[]) AS u(ct, dt, w, ns, m, c, wt)`,
		d.Environment, d.Revision, types, targets, workloads, namespaces, manifests, configs, waiting)
	return nil
}

func (t *tx) Desired(ctx context.Context, env, revision string) (hub.Desired, error) {
	return t.desired(ctx, `WHERE environment = $1 AND revision = $2`, env, revision)
}

func (t *tx) LatestDesired(ctx context.Context, env string) (hub.Desired, error) {
	return t.desired(ctx, `WHERE environment = $1 ORDER BY posted_at DESC, id DESC LIMIT 1`, env)
}

func (t *tx) desired(ctx context.Context, where string, args ...any) (hub.Desired, error) {
	var d hub.Desired
	var posted pgtype.Timestamptz
	err := t.queryRow(ctx, `SELECT environment, revision, gitops_repo, branch, posted_at, promoted_commit FROM desired `+where, args...).
		Scan(&d.Environment, &d.Revision, &d.GitOpsRepo, &d.Branch, &posted, &d.PromotedCommit)
	if err != nil {
		return d, notFound(err)
	}
	d.PostedAt = fromTS(posted)
	rows, err := t.query(ctx, `SELECT cluster_type, deployment_target, workload, namespace, manifests, config, waiting
		FROM desired_assignments WHERE environment = $1 AND revision = $2 ORDER BY cluster_type, deployment_target`, d.Environment, d.Revision)
	if err != nil {
		return d, err
	}
	d.Assignments, err = pgx.CollectRows(rows, func(row pgx.CollectableRow) (hub.DesiredAssignment, error) {
		var a hub.DesiredAssignment
		var manifests, config []byte
		var waiting string
		if err := row.Scan(&a.ClusterType, &a.DeploymentTarget, &a.Workload, &a.Namespace, &manifests, &config, &waiting); err != nil {
			return a, err
		}
		var err error
		if a.Waiting, err = hub.DecodeWaiting(waiting); err != nil {
			return a, err
		}
		if err := json.Unmarshal(manifests, &a.Manifests); err != nil {
			return a, err
		}
		return a, json.Unmarshal(config, &a.Config)
	})
	if d.Assignments == nil {
		d.Assignments = []hub.DesiredAssignment{}
	}
	return d, err
}

// PruneDesired removes the desired states posted before a time, except each environment's
// latest, with their assignments and target counters.
func (t *tx) PruneDesired(ctx context.Context, before time.Time) (int64, error) {
	t.queueCounts()
	var n int64 // the count the statement selects (its command tag counts the one row it returns)
	err := t.queryRow(ctx, `WITH latest AS (
			SELECT DISTINCT ON (environment) id FROM desired ORDER BY environment, posted_at DESC, id DESC
		), old AS (
			DELETE FROM desired d WHERE d.posted_at < $1 AND d.id NOT IN (SELECT id FROM latest)
			RETURNING d.environment, d.revision
		), assignments AS (
			DELETE FROM desired_assignments a USING old WHERE a.environment = old.environment AND a.revision = old.revision
		), counts AS (
			DELETE FROM target_counts c USING old WHERE c.environment = old.environment AND c.revision = old.revision
		)
		SELECT count(*) FROM old`, before).Scan(&n)
	return n, err
}

func (t *tx) PutWorkloadVersion(_ context.Context, v hub.WorkloadVersion) error {
	t.queue(`INSERT INTO workload_versions (environment, deployment_target, workload, version, build, source_commit, reported_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (environment, deployment_target) DO UPDATE SET
		workload = excluded.workload, version = excluded.version, build = excluded.build, source_commit = excluded.source_commit,
		reported_at = excluded.reported_at`, v.Environment, v.DeploymentTarget, v.Workload, v.Version, v.Build, v.SourceCommit, v.ReportedAt)
	return nil
}

func (t *tx) WorkloadVersions(ctx context.Context, env string) ([]hub.WorkloadVersion, error) {
	rows, err := t.query(ctx, `SELECT environment, deployment_target, workload, version, build, source_commit, reported_at
		FROM workload_versions WHERE environment = $1 ORDER BY deployment_target`, env)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (hub.WorkloadVersion, error) {
		var v hub.WorkloadVersion
		var at pgtype.Timestamptz
		err := row.Scan(&v.Environment, &v.DeploymentTarget, &v.Workload, &v.Version, &v.Build, &v.SourceCommit, &at)
		v.ReportedAt = fromTS(at)
		return v, err
	})
}
