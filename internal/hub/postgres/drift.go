package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/fleetform/fleetform/internal/hub"
)

// Conditions of the kinds of drift on a row of clusters; $1 is the environment, and
// behindSQL's revision is $2.
const (
	silentSQL  = `(NOT reported OR NOT fresh)`
	behindSQL  = `(reported AND fresh AND revision <> $2)`
	failingSQL = `((reported AND fresh AND status = 'NonCompliant') OR
		name IN (SELECT cluster FROM deployments WHERE status = 'Failed'))`
	// wrongPathSQL is hub's pathBelongsTo negated, for fresh clusters: the folder, without a
	// leading ./ and a trailing /, is neither the cluster type nor ends with /<cluster type>.
	wrongPathSQL = `(reported AND fresh AND gitops_path <> '' AND
		CASE WHEN gitops_path LIKE './%' THEN substr(gitops_path, 3) ELSE gitops_path END NOT IN (cluster_type, cluster_type || '/') AND
		rtrim(gitops_path, '/') NOT LIKE '%/' || cluster_type)`
)

func (t *tx) DriftCounts(ctx context.Context, env, behindOf string, limit int) (hub.DriftCounts, error) {
	var out hub.DriftCounts
	// One pass over the environment's clusters counts every kind ($2 is "" when nothing is
	// behind: that count is dropped); only the kinds that have clusters are listed.
	err := t.queryRow(ctx, `SELECT count(*) FILTER (WHERE `+silentSQL+`), count(*) FILTER (WHERE `+failingSQL+`),
		count(*) FILTER (WHERE `+wrongPathSQL+`), count(*) FILTER (WHERE `+behindSQL+`)
		FROM clusters WHERE environment = $1`, env, behindOf).Scan(&out.Silent.Count, &out.Failing.Count, &out.WrongPath.Count, &out.Behind.Count)
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
		rows, err := t.query(ctx, fmt.Sprintf(`SELECT name FROM clusters WHERE environment = $1 AND %s ORDER BY name LIMIT $%d`,
			k.cond, len(k.args)+1), append(k.args, limit)...)
		if err != nil {
			return out, err
		}
		if k.into.First, err = pgx.CollectRows(rows, pgx.RowTo[string]); err != nil {
			return out, err
		}
		if k.into.First == nil {
			k.into.First = []string{}
		}
	}
	return out, nil
}
