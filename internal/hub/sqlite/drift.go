package sqlite

import (
	"context"

	"github.com/fleetform/fleetform/internal/hub"
)

// Conditions of the kinds of drift on a row of clusters (arguments: none, or the revision).
const (
	silentSQL  = `(reported = 0 OR fresh = 0)`
	behindSQL  = `(reported = 1 AND fresh = 1 AND revision <> ?)`
	failingSQL = `((reported = 1 AND fresh = 1 AND status = 'NonCompliant') OR
		name IN (SELECT cluster FROM deployments WHERE status = 'Failed'))`
	// wrongPathSQL is hub's pathBelongsTo negated, for fresh clusters: the folder, without a leading ./ and a
	// trailing /, is neither the cluster type nor ends with /<cluster type>.
	wrongPathSQL = `(reported = 1 AND fresh = 1 AND gitops_path <> '' AND
		CASE WHEN gitops_path LIKE './%' THEN substr(gitops_path, 3) ELSE gitops_path END NOT IN (cluster_type, cluster_type || '/') AND
		rtrim(gitops_path, '/') NOT LIKE '%/' || cluster_type)`
)

func (t *tx) DriftCounts(ctx context.Context, env, behindOf string, limit int) (hub.DriftCounts, error) {
	var out hub.DriftCounts
	// One pass over the environment's clusters counts every kind; only the kinds that have
	// clusters are listed.
	err := t.q.QueryRowContext(ctx, `SELECT count(CASE WHEN `+silentSQL+` THEN 1 END), count(CASE WHEN `+failingSQL+` THEN 1 END),
		count(CASE WHEN `+wrongPathSQL+` THEN 1 END), count(CASE WHEN `+behindSQL+` THEN 1 END)
		FROM clusters WHERE environment = ?`, behindOf, env).Scan(&out.Silent.Count, &out.Failing.Count, &out.WrongPath.Count, &out.Behind.Count)
	if err != nil {
		return out, err
	}
	type kind struct {
		into *hub.NamedCount
		cond string
		args []any
	}
	kinds := []kind{{&out.Silent, silentSQL, []any{env}}, {&out.Failing, failingSQL, []any{env}}, {&out.WrongPath, wrongPathSQL, []any{env}}}
	if behindOf != "" {
		kinds = append(kinds, kind{&out.Behind, behindSQL, []any{env, behindOf}})
	} else {
		out.Behind.Count = 0
	}
	out.Behind.First = []string{}
	for _, k := range kinds {
		k.into.First = []string{}
		if k.into.Count == 0 {
			continue
		}
		names, err := t.names(ctx, `SELECT name FROM clusters WHERE environment = ? AND `+k.cond+` ORDER BY name LIMIT ?`,
			append(k.args, limit)...)
		if err != nil {
			return out, err
		}
		k.into.First = names
	}
	return out, nil
}

// names runs a query of one text column and returns its values (never nil).
func (t *tx) names(ctx context.Context, query string, args ...any) ([]string, error) {
	rows, err := t.q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer func() { _ = rows.Close() }()
	out := []string{}
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			return nil, err
		}
		out = append(out, name)
	}
	return out, rows.Err()
}
