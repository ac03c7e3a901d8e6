package postgres

import (
	"context"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/fleetform/fleetform/internal/hub"
)

const tokenColumns = `id, hash, kind, cluster, name, source, created_at, expires_at, revoked_at` //nolint:gosec // column names, not a token

func scanToken(row pgx.Row) (hub.Token, error) {
	var tok hub.Token
	var created, expires, revoked pgtype.Timestamptz
	err := row.Scan(&tok.ID, &tok.Hash, &tok.Kind, &tok.Cluster, &tok.Name, &tok.Source, &created, &expires, &revoked)
	tok.CreatedAt, tok.ExpiresAt, tok.RevokedAt = fromTS(created), fromTS(expires), fromTS(revoked)
	return tok, notFound(err)
}

func (t *tx) Token(ctx context.Context, hash []byte) (hub.Token, error) {
	return scanToken(t.queryRow(ctx, `SELECT `+tokenColumns+` FROM tokens WHERE hash = $1`, hash))
}

func (t *tx) TokenByID(ctx context.Context, id string) (hub.Token, error) {
	return scanToken(t.queryRow(ctx, `SELECT `+tokenColumns+` FROM tokens WHERE id = $1`, id))
}

func (t *tx) Tokens(ctx context.Context, f hub.TokenFilter) ([]hub.Token, error) {
	sql := `SELECT ` + tokenColumns + ` FROM tokens WHERE true`
	var args []any
	for _, c := range []struct{ col, val string }{{"kind", f.Kind}, {"cluster", f.Cluster}} {
		if c.val != "" {
			args = append(args, c.val)
			sql += ` AND ` + c.col + ` = $` + strconv.Itoa(len(args))
		}
	}
	if f.Cluster != "" {
		sql += ` AND cluster <> ''` // the condition of tokens_cluster, for generic plans too
	}
	rows, err := t.query(ctx, sql+` ORDER BY kind, cluster, name, created_at, id`, args...)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (hub.Token, error) { return scanToken(row) })
}

func (t *tx) HasAdminToken(ctx context.Context, now time.Time) (bool, error) {
	var has bool
	err := t.queryRow(ctx, `SELECT EXISTS (SELECT 1 FROM tokens WHERE kind = $1 AND revoked_at IS NULL
		AND (expires_at IS NULL OR expires_at > $2))`, hub.TokenAdmin, now).Scan(&has)
	return has, err
}

func (t *tx) PutToken(_ context.Context, tok hub.Token) error {
	t.queue(`INSERT INTO tokens (`+tokenColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
		ON CONFLICT (hash) DO UPDATE SET kind = excluded.kind, cluster = excluded.cluster, name = excluded.name,
		source = excluded.source, expires_at = excluded.expires_at, revoked_at = excluded.revoked_at`,
		hub.TokenID(tok.Hash), tok.Hash, tok.Kind, tok.Cluster, tok.Name, tok.Source, ts(tok.CreatedAt), ts(tok.ExpiresAt), ts(tok.RevokedAt))
	return nil
}

func (t *tx) DeleteClusterTokens(_ context.Context, cluster string) error {
	t.queue(`DELETE FROM tokens WHERE cluster = $1 AND cluster <> '' AND kind = $2`, cluster, hub.TokenCluster)
	return nil
}
