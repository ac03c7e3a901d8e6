package hub

import (
	"context"
	"time"
)

// Environments lists the environments with clusters or desired states, sorted.
func (h *Hub) Environments(ctx context.Context) ([]string, error) {
	var out []string
	err := h.store.View(ctx, func(r Reader) error {
		var err error
		out, err = r.Environments(ctx)
		return err
	})
	if out == nil {
		out = []string{}
	}
	return out, err
}

// Ping checks that the store answers a read.
func (h *Hub) Ping(ctx context.Context) error {
	return h.store.View(ctx, func(r Reader) error {
		_, err := r.HasAdminToken(ctx, h.opts.Now())
		return err
	})
}

// StaleAfter returns the staleness limit the hub was configured with.
func (h *Hub) StaleAfter() time.Duration { return h.opts.StaleAfter }
