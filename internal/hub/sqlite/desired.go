package sqlite

import (
	"context"
	"encoding/json"
	"time"

	"github.com/fleetform/fleetform/internal/hub"
)

func (t *tx) PutDesired(ctx context.Context, d hub.Desired) error {
	if _, err := t.q.ExecContext(ctx, `DELETE FROM desired_assignments WHERE environment = ? AND revision = ?`, d.Environment, d.Revision); err != nil {
		return err
	}
	if _, err := t.q.ExecContext(ctx, `INSERT INTO desired (environment, revision, gitops_repo, branch, posted_at, promoted_commit)
		VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (environment, revision) DO UPDATE SET gitops_repo = excluded.gitops_repo,
		branch = excluded.branch, posted_at = excluded.posted_at, promoted_commit = excluded.promoted_commit`,
		d.Environment, d.Revision, d.GitOpsRepo, d.Branch, ms(d.PostedAt), d.PromotedCommit); err != nil {
		return err
	}
	for _, a := range d.Assignments {
		manifests, err := json.Marshal(a.Manifests)
		if err != nil {
			return err
		}
		config, err := json.Marshal(a.Config)
		if err != nil {
			return err
		}
		waiting, err := hub.EncodeWaiting(a.Waiting)
		if err != nil {
			return err
		}
		if _, err := t.q.ExecContext(ctx, `INSERT INTO desired_assignments (environment, revision, cluster_type, deployment_target,
			workload, namespace, manifests, config, waiting) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`, d.Environment, d.Revision, a.ClusterType,
			a.DeploymentTarget, a.Workload, a.Namespace, string(manifests), string(config), waiting); err != nil {
			return err
		}
	}
	return nil
}

func (t *tx) Desired(ctx context.Context, env, revision string) (hub.Desired, error) {
	return t.desired(ctx, `WHERE environment = ? AND revision = ?`, env, revision)
}

func (t *tx) LatestDesired(ctx context.Context, env string) (hub.Desired, error) {
	return t.desired(ctx, `WHERE environment = ? ORDER BY posted_at DESC, id DESC LIMIT 1`, env)
}

func (t *tx) desired(ctx context.Context, where string, args ...any) (hub.Desired, error) {
	var d hub.Desired
	var posted int64
	err := t.q.QueryRowContext(ctx, `SELECT environment, revision, gitops_repo, branch, posted_at, promoted_commit FROM desired `+where, args...).
		Scan(&d.Environment, &d.Revision, &d.GitOpsRepo, &d.Branch, &posted, &d.PromotedCommit)
	if err != nil {
		return d, notFound(err)
	}
	d.PostedAt = fromMS(posted)
	rows, err := t.q.QueryContext(ctx, `SELECT cluster_type, deployment_target, workload, namespace, manifests, config, waiting
		FROM desired_assignments WHERE environment = ? AND revision = ? ORDER BY cluster_type, deployment_target`, d.Environment, d.Revision)
	if err != nil {
		return d, err
	}
	defer func() { _ = rows.Close() }()
	d.Assignments = []hub.DesiredAssignment{}
	for rows.Next() {
		var a hub.DesiredAssignment
		var manifests, config, waiting string
		if err := rows.Scan(&a.ClusterType, &a.DeploymentTarget, &a.Workload, &a.Namespace, &manifests, &config, &waiting); err != nil {
			return d, err
		}
		var err error
		if a.Waiting, err = hub.DecodeWaiting(waiting); err != nil {
			return d, err
		}
		if err := json.Unmarshal([]byte(manifests), &a.Manifests); err != nil {
			return d, err
		}
		if err := json.Unmarshal([]byte(config), &a.Config); err != nil {
			return d, err
		}
		d.Assignments = append(d.Assignments, a)
	}
	return d, rows.Err()
}

func (t *tx) PruneDesired(ctx context.Context, before time.Time) (int64, error) {
	const old = `FROM desired d WHERE posted_at < ? AND id <> (SELECT id FROM desired l WHERE l.environment = d.environment
		ORDER BY posted_at DESC, id DESC LIMIT 1)`
	for _, table := range []string{"desired_assignments", "target_counts"} {
		if _, err := t.q.ExecContext(ctx, `DELETE FROM `+table+` WHERE (environment, revision) IN (SELECT environment, revision `+old+`)`,
			ms(before)); err != nil {
			return 0, err
		}
	}
	res, err := t.q.ExecContext(ctx, `DELETE FROM desired WHERE id IN (SELECT id `+old+`)`, ms(before))
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

func (t *tx) PutWorkloadVersion(ctx context.Context, v hub.WorkloadVersion) error {
	_, err := t.q.ExecContext(ctx, `INSERT INTO workload_versions (environment, deployment_target, workload, version, build,
		source_commit, reported_at) VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (environment, deployment_target) DO UPDATE SET
		workload = excluded.workload, version = excluded.version, build = excluded.build, source_commit = excluded.source_commit,
		reported_at = excluded.reported_at`, v.Environment, v.DeploymentTarget, v.Workload, v.Version, v.Build, v.SourceCommit, ms(v.ReportedAt))
	return err
}

func (t *tx) WorkloadVersions(ctx context.Context, env string) ([]hub.WorkloadVersion, error) {
	rows, err := t.q.QueryContext(ctx, `SELECT environment, deployment_target, workload, version, build, source_commit, reported_at
		FROM workload_versions WHERE environment = ? ORDER BY deployment_target`, env)
	if err != nil {
		return nil, err
	}
	defer func() { _ = rows.Close() }()
	var out []hub.WorkloadVersion
	for rows.Next() {
		var v hub.WorkloadVersion
		var at int64
		if err := rows.Scan(&v.Environment, &v.DeploymentTarget, &v.Workload, &v.Version, &v.Build, &v.SourceCommit, &at); err != nil {
			return nil, err
		}
		v.ReportedAt = fromMS(at)
		out = append(out, v)
	}
	return out, rows.Err()
}
