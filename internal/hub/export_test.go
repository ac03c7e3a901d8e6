package hub

import (
	"context"
	"time"
)

// ExpireStaleDue is expireStale: how many clusters expired, and when the sweep loop looks
// next.
func (h *Hub) ExpireStaleDue(ctx context.Context) (int, time.Time, error) { return h.expireStale(ctx) }
