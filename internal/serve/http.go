package serve

import (
	"context"
	"encoding/json"
	"net/http"
	"time"
)

// Pinger tells whether the store answers.
type Pinger interface {
	Ping(ctx context.Context) error
}

// readyTimeout bounds the store check of /readyz.
const readyTimeout = 2 * time.Second

// Handler is serve's one port: the webhooks, /readyz (the store answers and, on the leader,
// the first sync of every source is done), and everything else from the hub's API handler
// (the API under /api/, /healthz, /metrics). changes, when not nil, is the authoring API
// (POST /api/v1/controlplane/changes).
func Handler(hubAPI http.Handler, store Pinger, svc *Service, webhooks, changes http.Handler) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/api/v1/webhooks/git", webhooks)
	if changes != nil {
		mux.Handle("/api/v1/controlplane/changes", changes)
	}
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), readyTimeout)
		defer cancel()
		switch {
		case store.Ping(ctx) != nil:
			writeError(w, http.StatusServiceUnavailable, "unavailable", "the store does not answer")
		case !svc.Ready():
			writeError(w, http.StatusServiceUnavailable, "unavailable", "the first sync of every source is not done yet")
		default:
			w.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(w).Encode(map[string]any{"status": "ready", "leader": svc.Leading()})
		}
	})
	mux.Handle("/", hubAPI)
	return mux
}
