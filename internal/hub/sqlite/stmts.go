package sqlite

import (
	"context"
	"database/sql"
	"sync"
)

// stmtCache prepares each query once per pool: SQLite parses a statement on every prepare,
// and preparing was half of the CPU time of an ingest transaction. database/sql keeps the
// prepared statement per connection and reuses it in every transaction on that connection.
//
// A statement is prepared on the pool only between transactions (preparePending): preparing
// on the pool inside a transaction would wait for a free connection, and the write pool has
// one, held by that transaction. Until then the query runs unprepared.
type stmtCache struct {
	db      *sql.DB
	mu      sync.Mutex
	stmts   map[string]*sql.Stmt
	pending map[string]bool
}

func newStmtCache(db *sql.DB) *stmtCache {
	return &stmtCache{db: db, stmts: map[string]*sql.Stmt{}, pending: map[string]bool{}}
}

// get returns the pool's statement for query, or nil (and notes it) when not prepared yet.
func (c *stmtCache) get(query string) *sql.Stmt {
	c.mu.Lock()
	defer c.mu.Unlock()
	s, ok := c.stmts[query]
	if !ok {
		c.pending[query] = true
	}
	return s
}

// preparePending prepares the queries noted by get; call it while holding no connection.
// A query that fails to prepare is left to run unprepared (its error shows there).
// The lock is not held while preparing: a transaction holding the connection may need it.
func (c *stmtCache) preparePending(ctx context.Context) {
	c.mu.Lock()
	pending := c.pending
	c.pending = map[string]bool{}
	c.mu.Unlock()
	for q := range pending {
		s, err := c.db.PrepareContext(ctx, q)
		if err != nil {
			continue
		}
		c.mu.Lock()
		if _, ok := c.stmts[q]; ok {
			_ = s.Close() // prepared meanwhile by another caller
		} else {
			c.stmts[q] = s
		}
		c.mu.Unlock()
	}
}

// close closes the prepared statements.
func (c *stmtCache) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for q, s := range c.stmts {
		_ = s.Close()
		delete(c.stmts, q)
	}
}

// cachedTx is a querier running a transaction's queries through the cache's statements.
type cachedTx struct {
	tx    *sql.Tx
	cache *stmtCache
	// stmts are the cache's statements bound to this transaction.
	stmts map[string]*sql.Stmt
}

// stmt returns the transaction's statement for query, nil when it is not prepared yet.
func (c *cachedTx) stmt(ctx context.Context, query string) *sql.Stmt {
	if s, ok := c.stmts[query]; ok {
		return s
	}
	s := c.cache.get(query)
	if s == nil {
		return nil
	}
	s = c.tx.StmtContext(ctx, s) // closed with the transaction
	c.stmts[query] = s
	return s
}

func (c *cachedTx) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	if s := c.stmt(ctx, query); s != nil {
		return s.ExecContext(ctx, args...)
	}
	return c.tx.ExecContext(ctx, query, args...)
}

func (c *cachedTx) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	if s := c.stmt(ctx, query); s != nil {
		return s.QueryContext(ctx, args...)
	}
	return c.tx.QueryContext(ctx, query, args...)
}

func (c *cachedTx) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	if s := c.stmt(ctx, query); s != nil {
		return s.QueryRowContext(ctx, args...)
	}
	return c.tx.QueryRowContext(ctx, query, args...)
}
