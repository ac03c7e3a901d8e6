// Package api is the hub's HTTP API: JSON handlers over *hub.Hub on a net/http ServeMux,
// bearer-token authentication, hub error codes mapped to HTTP statuses, health endpoints and
// Prometheus metrics on the handler's own registry.
//
// Every error is a JSON object {"error": "...", "code": "..."}; codes are hub.Code values.
package api

import (
	"context"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/fleetform/fleetform/internal/access"
	"github.com/fleetform/fleetform/internal/hub"
)

// Default body limits.
const (
	// DefaultMaxBodyBytes bounds request bodies (a report of a few thousand deployments fits).
	DefaultMaxBodyBytes = 1 << 20
	// DefaultMaxDesiredBytes bounds the desired state of an environment (every assignment
	// with its manifests and composed configuration).
	DefaultMaxDesiredBytes = 64 << 20
	// DefaultMaxBatchBytes bounds POST /api/v1/reports/batch bodies (up to
	// hub.MaxReportsPerBatch reports with their tokens).
	DefaultMaxBatchBytes = 16 << 20
)

// Options configure a Handler.
type Options struct {
	// Logger logs failed requests (default: discard).
	Logger *slog.Logger
	// MaxBodyBytes bounds request bodies (default DefaultMaxBodyBytes); a larger body is a 400.
	MaxBodyBytes int64
	// MaxDesiredBytes bounds POST /api/v1/desired bodies (default DefaultMaxDesiredBytes).
	MaxDesiredBytes int64
	// MaxBatchBytes bounds POST /api/v1/reports/batch bodies (default DefaultMaxBatchBytes).
	MaxBatchBytes int64
	// DriftAfter is how long after a desired revision was posted a cluster still at another
	// revision counts as behind in GET /api/v1/drift (default: the hub's staleness limit).
	DriftAfter time.Duration
	// Metrics is where the handler counts requests and reads rollout gauges; pass the same
	// Metrics as the hub's Observer to count ingest results. Nil: the handler makes its own.
	Metrics *Metrics
	// Rights decide the writes a read-only token may make by the access policies
	// (approvals, token administration); nil: only the admin token writes.
	Rights Rights
	// Approvals are the environments' four-eyes rules, which approvals obey (nil: none).
	Approvals ApprovalRules
}

// Rights decide what an identity may do (*access.Rights).
type Rights interface {
	Decide(id access.Identity, req access.Request) access.Decision
	Roles(id access.Identity) []string
}

// ApprovalRules answer an environment's four-eyes rule (spec.promotion.approvals).
type ApprovalRules interface {
	ApprovalRule(env string) hub.ApprovalRule
}

// Handler serves the hub's API.
type Handler struct {
	hub     *hub.Hub
	opts    Options
	mux     *http.ServeMux
	metrics *Metrics
}

// New returns the API handler over h.
func New(h *hub.Hub, opts Options) *Handler {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.MaxBodyBytes <= 0 {
		opts.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if opts.MaxDesiredBytes <= 0 {
		opts.MaxDesiredBytes = DefaultMaxDesiredBytes
	}
	if opts.MaxBatchBytes <= 0 {
		opts.MaxBatchBytes = DefaultMaxBatchBytes
	}
	if opts.DriftAfter <= 0 {
		opts.DriftAfter = h.StaleAfter()
	}
	if opts.Metrics == nil {
		opts.Metrics = NewMetrics()
	}
	if opts.Rights == nil {
		opts.Rights = access.Compile(nil) // no policy: only the admin token writes
	}
	a := &Handler{hub: h, opts: opts, mux: http.NewServeMux(), metrics: opts.Metrics}
	a.metrics.watchRollouts(h)
	a.routes()
	return a
}

// caller is who may call an endpoint.
type caller int

const (
	// public endpoints need no token (health, metrics).
	public caller = iota
	// reader endpoints need the admin token or a read-only token.
	reader
	// admin endpoints need the admin token.
	admin
	// anyToken endpoints need a valid token; the hub checks the principal (reports).
	anyToken
	// relay endpoints need a relay token or the admin token (batches of reports, each
	// carrying its cluster's own token, which the hub checks).
	relay
	// person endpoints need the admin token or a read-only token; the handler decides the
	// request by the access policies (Options.Rights).
	person
)

// endpoint handles an authenticated request; an error is written as JSON.
type endpoint func(w http.ResponseWriter, r *http.Request, p hub.Principal) error

func (a *Handler) routes() {
	a.handle("GET /healthz", public, a.healthz)
	a.handle("GET /readyz", public, a.readyz)
	a.mux.Handle("GET /metrics", promhttp.HandlerFor(a.metrics.registry, promhttp.HandlerOpts{}))

	a.handle("POST /api/v1/clusters", admin, a.registerCluster)
	a.handle("POST /api/v1/clusters/batch", admin, a.registerClusters)
	a.handle("POST /api/v1/tokens", person, a.createToken)
	a.handle("GET /api/v1/tokens", person, a.listTokens)
	a.handle("DELETE /api/v1/tokens/{id}", person, a.revokeToken)
	a.handle("POST /api/v1/tokens/{id}/rotate", person, a.rotateToken)
	a.handle("POST /api/v1/desired", admin, a.postDesired)
	a.handle("POST /api/v1/versions", person, a.postVersion)
	a.handle("POST /api/v1/approvals", person, a.approve)
	a.handle("POST /api/v1/environments/{env}/mass-deletion", person, a.confirmMassDeletion)
	a.handle("POST /api/v1/events", person, a.recordEvent)
	a.handle("POST /api/v1/reports", anyToken, a.postReport)
	a.handle("POST /api/v1/reports/batch", relay, a.postReports)

	a.handle("GET /api/v1/whoami", reader, a.whoami)
	a.handle("GET /api/v1/environments", reader, a.environments)
	a.handle("GET /api/v1/environments/{env}/rollout", reader, a.rollout)
	a.handle("GET /api/v1/environments/{env}/source", reader, a.source)
	a.handle("GET /api/v1/clusters/{name}", reader, a.cluster)
	a.handle("GET /api/v1/approvals", reader, a.approvals)
	a.handle("GET /api/v1/diff", reader, a.diff)
	a.handle("GET /api/v1/history", reader, a.history)
	a.handle("GET /api/v1/drift", reader, a.drift)
	a.handle("GET /api/v1/sources", reader, a.sources)
	a.handle("GET /api/v1/environments/{env}/sync", reader, a.latestSync)
}

func (a *Handler) handle(pattern string, acc caller, fn endpoint) {
	a.mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
		p, err := a.authorize(r, acc)
		if err == nil {
			err = checkQuery(r)
		}
		if err == nil {
			err = fn(w, r, p)
		}
		if err != nil {
			a.writeError(w, r, err)
		}
	})
}

// ServeHTTP serves a request, answering unknown paths and methods with JSON errors and
// timing every request.
func (a *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
	if _, pattern := a.mux.Handler(r); pattern == "" {
		a.unrouted(rec, r)
	} else {
		a.mux.ServeHTTP(rec, r)
	}
	a.metrics.observeRequest(r.Method, routeOf(r), rec.status, time.Since(start))
}

// unrouted answers a request no pattern matches: 404, or 405 with Allow.
func (a *Handler) unrouted(w http.ResponseWriter, r *http.Request) {
	probe := &headerProbe{header: http.Header{}}
	h, _ := a.mux.Handler(r)
	h.ServeHTTP(probe, r)
	if probe.status == http.StatusMethodNotAllowed {
		w.Header().Set("Allow", probe.header.Get("Allow"))
		WriteJSONError(w, http.StatusMethodNotAllowed, "method_not_allowed", r.Method+" is not allowed on "+r.URL.Path)
		return
	}
	WriteJSONError(w, http.StatusNotFound, string(hub.CodeNotFound), "no endpoint at "+r.URL.Path)
}

// routeOf is the metrics label of a request: its pattern, without the method.
func routeOf(r *http.Request) string {
	if r.Pattern == "" {
		return "unrouted"
	}
	_, path, _ := strings.Cut(r.Pattern, " ")
	return path
}

// authorize resolves the bearer token and checks it may call the endpoint.
func (a *Handler) authorize(r *http.Request, acc caller) (hub.Principal, error) {
	if acc == public {
		return hub.Principal{}, nil
	}
	p, err := a.hub.Authenticate(r.Context(), BearerToken(r))
	if err != nil {
		return p, err
	}
	switch {
	case acc == admin && p.Kind != hub.TokenAdmin:
		return p, hub.Errorf(hub.CodeForbidden, "this endpoint needs the admin token")
	case acc == reader && !p.MayRead():
		return p, hub.Errorf(hub.CodeForbidden, "reading needs the admin token, a read-only token or a person signed in")
	case acc == relay && p.Kind != hub.TokenAdmin && p.Kind != hub.TokenRelay:
		return p, hub.Errorf(hub.CodeForbidden, "batches of reports need a relay token or the admin token")
	case acc == person && !p.MayRead():
		return p, hub.Errorf(hub.CodeForbidden, "this endpoint needs the admin token, or a read-only token or a person the access policies allow")
	}
	return p, nil
}

// permit decides a request of p by the access policies: nil, or a forbidden error with the
// reason.
func (a *Handler) permit(p hub.Principal, req access.Request) error {
	_, err := a.decide(p, req)
	return err
}

// decide decides a request of p by the access policies: the actor to record with the
// decision's reason, or a forbidden error with the reason.
func (a *Handler) decide(p hub.Principal, req access.Request) (*hub.Actor, error) {
	id := p.Identity()
	d := a.opts.Rights.Decide(id, req)
	if !d.Allowed {
		return nil, hub.Errorf(hub.CodeForbidden, "%s", d.Reason)
	}
	return hub.ActorOf(id, d), nil
}

// checkQuery refuses a query string that does not parse: r.URL.Query() would silently drop
// the pairs it cannot read (a raw ';', a bad escape), and a filter dropped widens the answer.
func checkQuery(r *http.Request) error {
	if _, err := url.ParseQuery(r.URL.RawQuery); err != nil {
		return hub.Errorf(hub.CodeInvalid, "query string: %s", err.Error())
	}
	return nil
}

// BearerToken returns the token of an "Authorization: Bearer TOKEN" header ("" if none).
func BearerToken(r *http.Request) string {
	scheme, token, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return ""
	}
	return strings.TrimSpace(token)
}

func (a *Handler) healthz(w http.ResponseWriter, _ *http.Request, _ hub.Principal) error {
	return WriteJSON(w, http.StatusOK, map[string]string{"status": "ok"})
}

// readyTimeout bounds the store check of /readyz.
const readyTimeout = 2 * time.Second

func (a *Handler) readyz(w http.ResponseWriter, r *http.Request, _ hub.Principal) error {
	ctx, cancel := context.WithTimeout(r.Context(), readyTimeout)
	defer cancel()
	if err := a.hub.Ping(ctx); err != nil {
		a.opts.Logger.WarnContext(ctx, "store not ready", "error", err.Error())
		WriteJSONError(w, http.StatusServiceUnavailable, "unavailable", "the store does not answer")
		return nil
	}
	return WriteJSON(w, http.StatusOK, map[string]string{"status": "ready"})
}
