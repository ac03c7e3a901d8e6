// Package relay forwards clusters' reports to a hub in batches. A site's agents post their
// reports to the relay exactly as they would to the hub, each with its own cluster token;
// the relay sends whatever is waiting in one request (POST /api/v1/reports/batch, with a
// relay token) and answers each agent with what the hub answered for its report. The hub
// still authenticates every report by its cluster's token: the relay holds no power of its
// own but forwarding. An agent hears 202 only once the hub made its report durable.
package relay

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/fleetform/fleetform/internal/hub"
	"github.com/fleetform/fleetform/internal/hub/api"
)

// Defaults of Options.
const (
	DefaultMaxBatch = 500
	DefaultSenders  = 4
	DefaultTimeout  = 30 * time.Second
)

// batchOverhead is what a batch body adds to its reports: {"reports":[...]} and, per
// report, {"token":"","report":} and a comma.
const (
	batchOverhead  = len(`{"reports":[]}`)
	reportOverhead = len(`{"token":"","report":},`)
)

// Forwarder sends a batch of reports to the hub (the hub client does).
type Forwarder interface {
	ReportBatch(ctx context.Context, reports []api.SignedReport) ([]api.ReportResult, error)
}

// Options configure a Relay.
type Options struct {
	// MaxBatch bounds the reports of one batch (default DefaultMaxBatch, at most
	// hub.MaxReportsPerBatch).
	MaxBatch int
	// MaxBatchBytes bounds a batch's body (default api.DefaultMaxBatchBytes, the hub's limit).
	MaxBatchBytes int
	// MaxBodyBytes bounds one agent's report (default api.DefaultMaxBodyBytes, as the hub).
	MaxBodyBytes int64
	// Senders is how many batches may be in flight at once (default DefaultSenders).
	Senders int
	// Timeout bounds one batch's request (default DefaultTimeout).
	Timeout time.Duration
	// Logger logs batches the hub did not take (default: discard).
	Logger *slog.Logger
}

// Relay is the agents' side (an http.Handler) and the hub's side (Run) of a relay.
type Relay struct {
	hub   Forwarder
	opts  Options
	queue chan *pending
	mux   *http.ServeMux
}

// pending is one agent's report waiting for its batch's answer.
type pending struct {
	report api.SignedReport
	size   int
	done   chan outcome
}

// outcome is the hub's result for one report, or why its batch failed.
type outcome struct {
	result api.ReportResult
	err    error
}

// New returns a relay forwarding to the hub behind to.
func New(to Forwarder, opts Options) *Relay {
	if opts.MaxBatch <= 0 || opts.MaxBatch > maxBatch {
		opts.MaxBatch = min(DefaultMaxBatch, maxBatch)
	}
	if opts.MaxBatchBytes <= 0 {
		opts.MaxBatchBytes = api.DefaultMaxBatchBytes
	}
	if opts.MaxBodyBytes <= 0 {
		opts.MaxBodyBytes = api.DefaultMaxBodyBytes
	}
	if opts.Senders <= 0 {
		opts.Senders = DefaultSenders
	}
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	r := &Relay{hub: to, opts: opts, queue: make(chan *pending, opts.Senders*opts.MaxBatch), mux: http.NewServeMux()}
	r.mux.HandleFunc("POST /api/v1/reports", r.postReport)
	r.mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		_ = api.WriteJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	})
	r.mux.HandleFunc("/", func(w http.ResponseWriter, req *http.Request) {
		api.WriteJSONError(w, http.StatusNotFound, string(hub.CodeNotFound),
			"a relay forwards only POST /api/v1/reports; ask the hub for "+req.Method+" "+req.URL.Path)
	})
	return r
}

// maxBatch is the most reports the hub takes in one batch.
const maxBatch = hub.MaxReportsPerBatch

// ServeHTTP serves the agents.
func (r *Relay) ServeHTTP(w http.ResponseWriter, req *http.Request) { r.mux.ServeHTTP(w, req) }

// postReport queues an agent's report and answers what the hub answered for it.
func (r *Relay) postReport(w http.ResponseWriter, req *http.Request) {
	token := api.BearerToken(req)
	if token == "" {
		w.Header().Set("WWW-Authenticate", `Bearer realm="fleetform-hub"`)
		api.WriteJSONError(w, http.StatusUnauthorized, string(hub.CodeUnauthorized), "a bearer token is required: the cluster's own")
		return
	}
	var rep hub.Report
	if err := api.DecodeJSON(w, req, &rep, r.opts.MaxBodyBytes); err != nil {
		message := err.Error()
		if he := (*hub.Error)(nil); errors.As(err, &he) {
			message = he.Message
		}
		api.WriteJSONError(w, http.StatusBadRequest, string(hub.CodeInvalid), message)
		return
	}
	// The batch carries the report as the client encodes it, which may be larger than the
	// agent's body (encoding/json escapes <, > and &): its size is measured on that encoding.
	encoded, err := json.Marshal(rep)
	if err != nil {
		api.WriteJSONError(w, http.StatusBadRequest, string(hub.CodeInvalid), "the report cannot be encoded: "+err.Error())
		return
	}
	p := &pending{report: api.SignedReport{Token: token, Report: rep}, size: len(encoded) + len(token) + reportOverhead,
		done: make(chan outcome, 1)}
	select {
	case r.queue <- p:
	case <-req.Context().Done():
		return // the agent went away: nobody reads an answer
	}
	var o outcome
	select {
	case o = <-p.done:
	case <-req.Context().Done():
		return
	}
	switch {
	case o.err != nil:
		api.WriteJSONError(w, http.StatusBadGateway, "unavailable", "the relay could not deliver the report to the hub: "+o.err.Error())
	case o.result.Accepted:
		_ = api.WriteJSON(w, http.StatusAccepted, api.ReportAccepted{Cluster: rep.Cluster, Accepted: true})
	case o.result.Status < 400 || o.result.Status > 599: // not an answer the hub gives
		api.WriteJSONError(w, http.StatusBadGateway, "unavailable", fmt.Sprintf("the hub answered status %d for the report", o.result.Status))
	default:
		if o.result.Status == http.StatusUnauthorized {
			w.Header().Set("WWW-Authenticate", `Bearer realm="fleetform-hub"`)
		}
		api.WriteJSONError(w, o.result.Status, o.result.Code, o.result.Error)
	}
}

// Run sends batches until ctx ends. Stop the agents' side first (http.Server.Shutdown): a
// report queued after Run returned waits until its agent gives up.
func (r *Relay) Run(ctx context.Context) {
	done := make(chan struct{})
	for range r.opts.Senders {
		go func() {
			defer func() { done <- struct{}{} }()
			r.send(ctx)
		}()
	}
	for range r.opts.Senders {
		<-done
	}
}

// send forwards what is waiting, as much per batch as the limits allow, until ctx ends.
func (r *Relay) send(ctx context.Context) {
	var next *pending // taken from the queue but left for the next batch (it did not fit)
	for {
		first := next
		if first == nil {
			select {
			case first = <-r.queue:
			case <-ctx.Done():
				return
			}
		}
		batch, size := []*pending{first}, batchOverhead+first.size
		next = nil
	drain:
		for len(batch) < r.opts.MaxBatch {
			select {
			case p := <-r.queue:
				if size+p.size > r.opts.MaxBatchBytes {
					next = p
					break drain
				}
				batch, size = append(batch, p), size+p.size
			default:
				break drain
			}
		}
		r.forward(ctx, batch)
	}
}

// forward sends one batch and hands every report its result.
func (r *Relay) forward(ctx context.Context, batch []*pending) {
	reports := make([]api.SignedReport, len(batch))
	for i, p := range batch {
		reports[i] = p.report
	}
	ctx, cancel := context.WithTimeout(ctx, r.opts.Timeout)
	defer cancel()
	results, err := r.hub.ReportBatch(ctx, reports)
	if err == nil && len(results) != len(batch) {
		err = fmt.Errorf("the hub answered %d results for %d reports", len(results), len(batch))
	}
	if err != nil {
		r.opts.Logger.ErrorContext(ctx, "batch not delivered", "reports", len(batch), "error", err.Error())
	}
	for i, p := range batch {
		if err != nil {
			p.done <- outcome{err: err}
			continue
		}
		p.done <- outcome{result: results[i]}
	}
}
