package hub

import (
	"context"
	"slices"
	"time"
)

// ExpireStaleDue is expireStale: how many clusters expired, and when the sweep loop looks
// next.
func (h *Hub) ExpireStaleDue(ctx context.Context) (int, time.Time, error) { return h.expireStale(ctx) }

// CommitReports commits reports as one batch of a writer, in order (each with its cluster's
// own principal), and returns each one's answer.
func (h *Hub) CommitReports(ctx context.Context, reports ...Report) []error {
	errs := make([]error, len(reports))
	var batch []*job
	for i, r := range reports {
		j, err := h.newJob(Principal{Kind: TokenCluster, Cluster: r.Cluster}, r)
		if err != nil {
			errs[i] = err
			continue
		}
		batch = append(batch, j)
	}
	h.commit(ctx, slices.Clone(batch))
	k := 0
	for i := range errs {
		if errs[i] == nil {
			errs[i] = <-batch[k].done
			k++
		}
	}
	return errs
}
