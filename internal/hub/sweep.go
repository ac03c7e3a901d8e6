package hub

import (
	"context"
	"errors"
	"slices"
	"time"
)

// Sweep intervals.
const (
	defaultSweepEvery = 5 * time.Second
	pruneEvery        = time.Hour
	sweepBatch        = 1000
	// pruneBatch is how many events one pruning transaction deletes: reports are committed
	// between two (SQLite has one writer), and the write-ahead log stays small.
	pruneBatch = 10_000
)

// sweepLoop expires stale clusters every few seconds and prunes old history every hour.
func (h *Hub) sweepLoop(ctx context.Context) {
	if h.opts.SweepEvery < 0 {
		<-ctx.Done()
		return
	}
	tick := time.NewTicker(h.opts.SweepEvery)
	defer tick.Stop()
	var lastPrune, due time.Time
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		if !h.opts.Now().Before(due) {
			start := time.Now()
			n, next, err := h.expireStale(ctx)
			switch {
			case err != nil && ctx.Err() == nil:
				h.opts.Logger.ErrorContext(ctx, "expiring stale clusters", "error", err.Error())
			case n > 0:
				h.opts.Logger.InfoContext(ctx, "expired stale clusters", "clusters", n, "seconds", time.Since(start).Seconds())
			}
			due = next
		}
		if h.opts.Now().Sub(lastPrune) >= pruneEvery {
			lastPrune = h.opts.Now()
			start := time.Now()
			if events, desired, err := h.prune(ctx); err != nil && ctx.Err() == nil {
				h.opts.Logger.ErrorContext(ctx, "pruning history", "error", err.Error())
			} else if events+desired > 0 {
				h.opts.Logger.InfoContext(ctx, "pruned history", "events", events, "desired_states", desired,
					"seconds", time.Since(start).Seconds())
			}
		}
	}
}

// ExpireStale marks the clusters whose latest report is older than StaleAfter as unknown,
// removing them from the rollout counters, and returns how many.
func (h *Hub) ExpireStale(ctx context.Context) (int, error) {
	n, _, err := h.expireStale(ctx)
	return n, err
}

// expireStale is ExpireStale, also returning when a cluster can next go stale: StaleAfter
// after the oldest report of the clusters still fresh (or after now, when none is), less
// staleMargin. Reports are only ever received later, so the sweep loop need not look
// before then; at a million clusters, each look reads the whole table on PostgreSQL.
func (h *Hub) expireStale(ctx context.Context) (int, time.Time, error) {
	total := 0
	for {
		now := h.opts.Now()
		cutoff := now.Add(-h.opts.StaleAfter)
		var names []string
		var oldest time.Time
		err := h.store.View(ctx, func(r Reader) error {
			var err error
			names, oldest, err = r.StaleClusters(ctx, cutoff, sweepBatch)
			return err
		})
		if err != nil {
			return total, time.Time{}, err
		}
		if len(names) > 0 {
			slices.Sort(names) // lock clusters in name order, as ingest does
			if err := h.store.Update(ctx, func(tx Tx) error { return h.expireAll(ctx, tx, names, cutoff) }); err != nil {
				return total, time.Time{}, err
			}
			total += len(names)
		}
		if len(names) < sweepBatch {
			if oldest.IsZero() || oldest.After(now) {
				oldest = now
			}
			return total, oldest.Add(h.opts.StaleAfter - staleMargin), nil
		}
	}
}

// staleMargin covers reports received before a sweep looked and committed after it: the
// sweep did not see them, and the oldest of them may be that much older than what it saw.
const staleMargin = time.Minute

func (h *Hub) expireAll(ctx context.Context, tx Tx, names []string, cutoff time.Time) error {
	for _, name := range names {
		if err := h.expire(ctx, tx, name, cutoff); err != nil {
			return err
		}
	}
	return nil
}

func (h *Hub) expire(ctx context.Context, tx Tx, name string, cutoff time.Time) error {
	c, err := tx.Cluster(ctx, name)
	if errors.Is(err, ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if err := tx.LockEnvironment(ctx, c.Environment, false); err != nil {
		return err
	}
	if c, err = tx.LockCluster(ctx, name); err != nil {
		return err
	}
	if !c.Fresh || !c.ReceivedAt.Before(cutoff) {
		return nil // a report arrived meanwhile
	}
	next := c
	next.Fresh = false
	return h.transition(ctx, tx, c, next, nil, false, h.opts.Now(), nil)
}

// Prune removes history and superseded desired states older than the retention.
func (h *Hub) Prune(ctx context.Context) error {
	_, _, err := h.prune(ctx)
	return err
}

// prune is Prune, returning how many events and desired states it removed. Events go in
// transactions of pruneBatch, oldest first.
func (h *Hub) prune(ctx context.Context) (events, desired int64, err error) {
	before := h.opts.Now().Add(-h.opts.Retention)
	for {
		var n int64
		err := h.store.Update(ctx, func(tx Tx) error {
			var err error
			n, err = tx.PruneHistory(ctx, before, pruneBatch)
			return err
		})
		if err != nil {
			return events, 0, err
		}
		events += n
		if n < pruneBatch {
			break
		}
	}
	err = h.store.Update(ctx, func(tx Tx) error {
		var err error
		desired, err = tx.PruneDesired(ctx, before)
		return err
	})
	return events, desired, err
}
