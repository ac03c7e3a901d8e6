package sqlite

import (
	"context"

	"github.com/fleetform/fleetform/internal/hub"
)

// HistoryPlan returns the EXPLAIN QUERY PLAN rows (their detail column) of the query
// History(f) runs.
func HistoryPlan(ctx context.Context, s *Store, f hub.HistoryFilter) ([]string, error) {
	q, args := historyQuery(f)
	rows, err := s.read.QueryContext(ctx, `EXPLAIN QUERY PLAN `+q, args...)
	if err != nil {
		return nil, err
	}
	defer func() { _ = rows.Close() }()
	var out []string
	for rows.Next() {
		var id, parent, unused int
		var detail string
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			return nil, err
		}
		out = append(out, detail)
	}
	return out, rows.Err()
}
