package sqlite

import (
	"context"
	"time"

	"github.com/fleetform/fleetform/internal/hub"
)

const tokenColumns = `id, hash, kind, cluster, name, source, created_at, expires_at, revoked_at, session` //nolint:gosec // column names, not a token

func scanToken(row interface{ Scan(...any) error }) (hub.Token, error) {
	var tok hub.Token
	var created, expires, revoked int64
	err := row.Scan(&tok.ID, &tok.Hash, &tok.Kind, &tok.Cluster, &tok.Name, &tok.Source, &created, &expires, &revoked, &tok.Session)
	tok.CreatedAt, tok.ExpiresAt, tok.RevokedAt = fromMS(created), fromMS(expires), fromMS(revoked)
	return tok, notFound(err)
}

// The token lookups by hash and by ID.
const (
	tokenByHash = `SELECT ` + tokenColumns + ` FROM tokens WHERE hash = ?`
	tokenByID   = `SELECT ` + tokenColumns + ` FROM tokens WHERE id = ?`
)

func (t *tx) Token(ctx context.Context, hash []byte) (hub.Token, error) {
	return scanToken(t.q.QueryRowContext(ctx, tokenByHash, hash))
}

func (t *tx) TokenByID(ctx context.Context, id string) (hub.Token, error) {
	return scanToken(t.q.QueryRowContext(ctx, tokenByID, id))
}

// tokensQuery is the query of Tokens(f) and its arguments. A cluster's tokens are read
// through the partial index tokens_cluster, which SQLite uses only when the query repeats
// its condition: the cluster is not empty. With a cluster, the kind is written +kind so
// that SQLite cannot pick tokens_kind instead: without statistics it takes the two
// equalities as equally selective, and every cluster's token has the kind "cluster".
func tokensQuery(f hub.TokenFilter) (string, []any) {
	q := `SELECT ` + tokenColumns + ` FROM tokens WHERE true`
	var args []any
	if f.Kind != "" {
		if f.Cluster != "" {
			q += ` AND +kind = ?`
		} else {
			q += ` AND kind = ?`
		}
		args = append(args, f.Kind)
	}
	if f.Cluster != "" {
		q += ` AND cluster = ? AND cluster <> ''`
		args = append(args, f.Cluster)
	}
	return q + ` ORDER BY kind, cluster, name, created_at, id`, args
}

func (t *tx) Tokens(ctx context.Context, f hub.TokenFilter) ([]hub.Token, error) {
	q, args := tokensQuery(f)
	rows, err := t.q.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer func() { _ = rows.Close() }()
	var out []hub.Token
	for rows.Next() {
		tok, err := scanToken(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, tok)
	}
	return out, rows.Err()
}

func (t *tx) HasAdminToken(ctx context.Context, now time.Time) (bool, error) {
	var n int
	err := t.q.QueryRowContext(ctx, `SELECT count(*) FROM tokens WHERE kind = ? AND revoked_at = 0 AND (expires_at = 0 OR expires_at > ?)`,
		hub.TokenAdmin, ms(now)).Scan(&n)
	return n > 0, err
}

// PutTokens stores the tokens one statement at a time (in the process: no round trips).
func (t *tx) PutTokens(ctx context.Context, toks ...hub.Token) error {
	for _, tok := range toks {
		_, err := t.q.ExecContext(ctx, `INSERT INTO tokens (`+tokenColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT (hash) DO UPDATE SET kind = excluded.kind, cluster = excluded.cluster, name = excluded.name,
			source = excluded.source, expires_at = excluded.expires_at, revoked_at = excluded.revoked_at, session = excluded.session`,
			hub.TokenID(tok.Hash), tok.Hash, tok.Kind, tok.Cluster, tok.Name, tok.Source, ms(tok.CreatedAt), ms(tok.ExpiresAt), ms(tok.RevokedAt), tok.Session)
		if err != nil {
			return err
		}
	}
	return nil
}

// deleteClusterTokens deletes a cluster's tokens through tokens_cluster (see tokensQuery
// for the +kind): with 1,000,000 clusters, reading tokens_kind instead made each rotation
// scan a million rows.
const deleteClusterTokens = `DELETE FROM tokens WHERE cluster = ? AND cluster <> '' AND +kind = ?`

func (t *tx) DeleteClusterTokens(ctx context.Context, cluster string) error {
	_, err := t.q.ExecContext(ctx, deleteClusterTokens, cluster, hub.TokenCluster)
	return err
}

// DeleteEndedTokens deletes the tokens of kind that expired before t (through tokens_kind).
func (t *tx) DeleteEndedTokens(ctx context.Context, kind string, before time.Time) error {
	_, err := t.q.ExecContext(ctx, `DELETE FROM tokens WHERE kind = ? AND expires_at <> 0 AND expires_at < ?`, kind, ms(before))
	return err
}
