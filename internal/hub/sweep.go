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
)

// sweepLoop expires stale clusters every few seconds and prunes old history every hour.
func (h *Hub) sweepLoop(ctx context.Context) {
	if h.opts.SweepEvery < 0 {
		<-ctx.Done()
		return
	}
	tick := time.NewTicker(h.opts.SweepEvery)
	defer tick.Stop()
	lastPrune := time.Time{}
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		if _, err := h.ExpireStale(ctx); err != nil && ctx.Err() == nil {
			h.opts.Logger.ErrorContext(ctx, "expiring stale clusters", "error", err.Error())
		}
		if h.opts.Now().Sub(lastPrune) >= pruneEvery {
			lastPrune = h.opts.Now()
			if err := h.Prune(ctx); err != nil && ctx.Err() == nil {
				h.opts.Logger.ErrorContext(ctx, "pruning history", "error", err.Error())
			}
		}
	}
}

// ExpireStale marks the clusters whose latest report is older than StaleAfter as unknown,
// removing them from the rollout counters, and returns how many.
func (h *Hub) ExpireStale(ctx context.Context) (int, error) {
	total := 0
	for {
		cutoff := h.opts.Now().Add(-h.opts.StaleAfter)
		var names []string
		err := h.store.View(ctx, func(r Reader) error {
			var err error
			names, err = r.StaleClusters(ctx, cutoff, sweepBatch)
			return err
		})
		if err != nil || len(names) == 0 {
			return total, err
		}
		slices.Sort(names) // lock clusters in name order, as ingest does
		err = h.store.Update(ctx, func(tx Tx) error {
			for _, name := range names {
				if err := h.expire(ctx, tx, name, cutoff); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return total, err
		}
		total += len(names)
		if len(names) < sweepBatch {
			return total, nil
		}
	}
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
	before := h.opts.Now().Add(-h.opts.Retention)
	return h.store.Update(ctx, func(tx Tx) error {
		if _, err := tx.PruneHistory(ctx, before); err != nil {
			return err
		}
		_, err := tx.PruneDesired(ctx, before)
		return err
	})
}
