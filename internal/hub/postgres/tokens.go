package postgres

import (
	"context"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/fleetform/fleetform/internal/hub"
)

const tokenColumns = `id, hash, kind, cluster, name, source, created_at, expires_at, revoked_at, session` //nolint:gosec // column names, not a token

func scanToken(row pgx.Row) (hub.Token, error) {
	var tok hub.Token
	var created, expires, revoked pgtype.Timestamptz
	err := row.Scan(&tok.ID, &tok.Hash, &tok.Kind, &tok.Cluster, &tok.Name, &tok.Source, &created, &expires, &revoked, &tok.Session)
	tok.CreatedAt, tok.ExpiresAt, tok.RevokedAt = fromTS(created), fromTS(expires), fromTS(revoked)
	return tok, notFound(err)
}

func (t *tx) Token(ctx context.Context, hash []byte) (hub.Token, error) {
	return scanToken(t.queryRow(ctx, `SELECT `+tokenColumns+` FROM tokens WHERE hash = $1`, hash))
}

func (t *tx) TokenByID(ctx context.Context, id string) (hub.Token, error) {
	return scanToken(t.queryRow(ctx, `SELECT `+tokenColumns+` FROM tokens WHERE id = $1`, id))
}

// tokensQuery is the query of Tokens(f) and its arguments. A cluster's tokens are read
// through the partial index tokens_cluster: the query repeats its condition (for generic
// plans too), and with a cluster the kind is compared as an expression (kind concatenated
// with the empty string), which no index matches. Without statistics (right after a bulk
// registration, until autovacuum analyzes the table) the planner otherwise ANDs
// tokens_kind in, and every cluster's token has the kind "cluster": each lookup read the
// whole of tokens_kind.
func tokensQuery(f hub.TokenFilter) (string, []any) {
	sql := `SELECT ` + tokenColumns + ` FROM tokens WHERE true`
	var args []any
	if f.Kind != "" {
		args = append(args, f.Kind)
		if f.Cluster != "" {
			sql += ` AND kind || '' = $1`
		} else {
			sql += ` AND kind = $1`
		}
	}
	if f.Cluster != "" {
		args = append(args, f.Cluster)
		sql += ` AND cluster = $` + strconv.Itoa(len(args)) + ` AND cluster <> ''`
	}
	return sql + ` ORDER BY kind, cluster, name, created_at, id`, args
}

func (t *tx) Tokens(ctx context.Context, f hub.TokenFilter) ([]hub.Token, error) {
	sql, args := tokensQuery(f)
	rows, err := t.query(ctx, sql, args...)
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

// PutTokens queues one statement that stores the tokens (the last of each hash).
func (t *tx) PutTokens(_ context.Context, toks ...hub.Token) error {
	last := make(map[string]int, len(toks))
	for i, tok := range toks {
		last[string(tok.Hash)] = i
	}
	var (
		ids, kinds, clusters, names, sources, sessions []string
		hashes                                         [][]byte
		created, expires, revoked                      []pgtype.Timestamptz
	)
	for i, tok := range toks {
		if last[string(tok.Hash)] != i {
			continue
		}
		ids, hashes, kinds, clusters = append(ids, hub.TokenID(tok.Hash)), append(hashes, tok.Hash), append(kinds, tok.Kind), append(clusters, tok.Cluster)
		names, sources, sessions = append(names, tok.Name), append(sources, tok.Source), append(sessions, tok.Session)
		created, expires, revoked = append(created, timestamptz(tok.CreatedAt)), append(expires, timestamptz(tok.ExpiresAt)), append(revoked, timestamptz(tok.RevokedAt))
	}
	if len(ids) == 0 {
		return nil
	}
	t.queue(`INSERT INTO tokens (`+tokenColumns+`)
		SELECT * FROM unnest($1::text[], $2::bytea[], $3::text[], $4::text[], $5::text[], $6::text[], $7::timestamptz[],
			$8::timestamptz[], $9::timestamptz[], $10::text[])
		ON CONFLICT (hash) DO UPDATE SET kind = excluded.kind, cluster = excluded.cluster, name = excluded.name,
		source = excluded.source, expires_at = excluded.expires_at, revoked_at = excluded.revoked_at, session = excluded.session`,
		ids, hashes, kinds, clusters, names, sources, created, expires, revoked, sessions)
	return nil
}

// deleteClusterTokens deletes a cluster's tokens through tokens_cluster (see tokensQuery
// for the kind's expression): with 1,000,000 clusters, ANDing tokens_kind in made each
// rotation read a million index entries.
const deleteClusterTokens = `DELETE FROM tokens WHERE cluster = $1 AND cluster <> '' AND kind || '' = $2`

func (t *tx) DeleteClusterTokens(_ context.Context, cluster string) error {
	t.queue(deleteClusterTokens, cluster, hub.TokenCluster)
	return nil
}

// DeleteEndedTokens deletes the tokens of kind that expired before t (through tokens_kind).
func (t *tx) DeleteEndedTokens(_ context.Context, kind string, before time.Time) error {
	t.queue(`DELETE FROM tokens WHERE kind = $1 AND expires_at IS NOT NULL AND expires_at < $2`, kind, timestamptz(before))
	return nil
}
