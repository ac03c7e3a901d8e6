package serve

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/fleetform/fleetform/internal/access"
	"github.com/fleetform/fleetform/internal/fleet"
	"github.com/fleetform/fleetform/internal/hub"
	"github.com/fleetform/fleetform/internal/hub/api"
	"github.com/fleetform/fleetform/internal/hub/client"
	"github.com/fleetform/fleetform/internal/hub/postgres"
	"github.com/fleetform/fleetform/internal/hub/relay"
	"github.com/fleetform/fleetform/internal/hub/sqlite"
	"github.com/fleetform/fleetform/internal/identity"
	"github.com/fleetform/fleetform/internal/repourl"
	"github.com/fleetform/fleetform/internal/ui"
)

// HubConfig is how a hub is served (`fleetform hub serve`, and `fleetform serve` around it).
type HubConfig struct {
	// Addr is where it listens (HOST:PORT; port 0: any free port).
	Addr string
	// DB is the store: sqlite:PATH or postgres://USER@HOST/DB.
	DB                                  string
	StaleAfter, Retention, MaxClockSkew time.Duration
	// TokenCacheTTL is how long a token lookup is kept (0: not at all).
	TokenCacheTTL time.Duration
	// Writers is the concurrent ingest transactions on a store that takes several (0: 1).
	Writers int
	// TLSCert and TLSKey, when set, serve HTTPS.
	TLSCert, TLSKey string
	// ShutdownTimeout is how long a stop waits for the requests in flight.
	ShutdownTimeout time.Duration
	// AdminToken is the configured admin token ("": the one in the store, else one generated
	// and printed once on Out).
	AdminToken string
	// SSO is how people and CI jobs sign in (zero: hub tokens only).
	SSO SSO
	// Out is told what is served, and a generated admin token (the process's stderr).
	Out    io.Writer
	Logger *slog.Logger
}

// AdminTokenEnv is the environment variable the admin token is read from.
const AdminTokenEnv = "FLEETFORM_HUB_ADMIN_TOKEN" //nolint:gosec // the variable's name, not a token

// HubServer is a hub with its store, metrics, API and web UI, ready to serve.
type HubServer struct {
	Hub     *hub.Hub
	Store   hub.Store
	Metrics *api.Metrics
	UI      *ui.Handler
	// Rights are the access policies in force, which fleetform serve keeps up to date; with
	// none, only the admin token writes.
	Rights *access.Rights
	// Approvals are the environments' four-eyes rules, which fleetform serve keeps up to
	// date; with none, one approval of anyone does.
	Approvals *hub.ApprovalRules
	api       http.Handler
	cfg       HubConfig
	// signIn is the UI's sign-in through the identity provider (nil: none).
	signIn *identity.SignIn
	// ln is the port served, taken before the store is opened.
	ln net.Listener
}

// StartHub takes the port, opens the store, makes the hub and settles the admin token
// (printing a generated one once on cfg.Out). A port in use is refused before the store is
// opened (or created).
func StartHub(ctx context.Context, cfg HubConfig) (*HubServer, error) {
	ln, err := (&net.ListenConfig{}).Listen(ctx, "tcp", cfg.Addr)
	if err != nil {
		return nil, err
	}
	hs, err := startHub(ctx, cfg)
	if err != nil {
		_ = ln.Close()
		return nil, err
	}
	hs.ln = ln
	return hs, nil
}

// Close releases the port and the store of a hub that is not served after all.
func (hs *HubServer) Close() error {
	return errors.Join(ignoreClosed(hs.ln.Close()), hs.Store.Close())
}

// startHub opens the store, makes the hub and settles the admin token.
func startHub(ctx context.Context, cfg HubConfig) (*HubServer, error) {
	store, writers, err := openStore(ctx, cfg.DB, cfg.Logger)
	if err != nil {
		return nil, err
	}
	if cfg.Writers > 0 && writers > 0 {
		writers = cfg.Writers
	}
	sso, err := cfg.SSO.start(cfg.Logger)
	if err != nil {
		_ = store.Close()
		return nil, err
	}
	metrics := api.NewMetrics()
	ttl := cfg.TokenCacheTTL
	if ttl == 0 {
		ttl = -1 // hub.Options: negative is no cache, zero its default
	}
	hopts := hub.Options{StaleAfter: cfg.StaleAfter, Retention: cfg.Retention, MaxClockSkew: cfg.MaxClockSkew,
		Writers: max(writers, 1), Logger: cfg.Logger, Observer: metrics, TokenCacheTTL: ttl}
	if sso.verifier != nil {
		hopts.People = sso.verifier
	}
	h := hub.New(store, hopts)
	generated, err := h.Bootstrap(ctx, cfg.AdminToken)
	if err != nil {
		_ = store.Close()
		return nil, fmt.Errorf("%s: %w", AdminTokenEnv, err)
	}
	if generated != "" {
		fmt.Fprintf(cfg.Out, "fleetform hub: generated the admin token (shown once; set %s to choose it):\n%s\n", AdminTokenEnv, generated)
	}
	rights, approvals := access.NewRights(), hub.NewApprovalRules()
	uiOpts := ui.Options{Logger: cfg.Logger, SecureCookies: secureCookies(cfg.TLSCert, cfg.SSO.ExternalURL), DriftAfter: cfg.StaleAfter, Rights: rights,
		Approvals: approvals, DisableTokenSignIn: cfg.SSO.DisableTokenSignIn}
	if sso.signIn != nil {
		uiOpts.SignIn, uiOpts.Sealer = sso.signIn, sso.sealer
	}
	web, err := ui.New(h, uiOpts)
	if err != nil {
		_ = store.Close()
		return nil, err
	}
	return &HubServer{Hub: h, Store: store, Metrics: metrics, UI: web, Rights: rights, Approvals: approvals, cfg: cfg, signIn: sso.signIn,
		api: api.New(h, api.Options{Logger: cfg.Logger, Metrics: metrics, DriftAfter: cfg.StaleAfter, Rights: rights,
			Approvals: approvals})}, nil
}

// openStore opens the store dsn names, with how many ingest writers it takes (0: one only,
// SQLite's single writer; 1: one by default, more when asked).
func openStore(ctx context.Context, dsn string, logger *slog.Logger) (hub.Store, int, error) {
	switch {
	case strings.HasPrefix(dsn, "sqlite:"):
		path := strings.TrimPrefix(strings.TrimPrefix(dsn, "sqlite:"), "//")
		if path == "" {
			return nil, 0, fleet.Usagef("--db sqlite:PATH needs a file path")
		}
		s, err := sqlite.Open(ctx, path)
		if err != nil {
			return nil, 0, fmt.Errorf("open %s: %w", path, err)
		}
		return s, 0, nil
	case strings.HasPrefix(dsn, "postgres://"), strings.HasPrefix(dsn, "postgresql://"):
		// Several writers (and several hub replicas), but one writer per hub by default: group
		// commits then grow with the load (docs/benchmarks.md).
		s, err := postgres.Open(ctx, dsn, logger)
		if err != nil {
			return nil, 0, fmt.Errorf("open %s: %w", repourl.Redact(dsn), err)
		}
		return s, 1, nil
	}
	return nil, 0, fleet.Usagef("--db %q: want sqlite:PATH or postgres://USER@HOST/DB", dsn)
}

// Handler serves the hub's API and the web UI on one port.
func (hs *HubServer) Handler() http.Handler { return ui.Mount(hs.api, hs.UI) }

// Serve runs the hub, the server of handler and work (when not nil) until ctx ends, then
// drains: work first (it finishes what is in flight), the server (requests in flight wait
// for their reports' commit), then ingest, then the store.
func (hs *HubServer) Serve(ctx context.Context, handler http.Handler, work func(context.Context) error) error {
	ln := hs.ln
	if hs.signIn != nil {
		hs.signIn.DefaultExternalURL(scheme(hs.cfg.TLSCert) + "://" + ln.Addr().String())
	}
	fmt.Fprintf(hs.cfg.Out, "fleetform hub: serving %s://%s\n", scheme(hs.cfg.TLSCert), ln.Addr())
	srv := newHTTPServer(handler, hs.cfg.Logger)
	runCtx, stopHub := context.WithCancel(context.WithoutCancel(ctx))
	hubDone := make(chan struct{})
	go func() {
		defer close(hubDone)
		_ = hs.Hub.Run(runCtx)
	}()
	var workErr chan error // nil without work: never ready
	if work != nil {
		workErr = make(chan error, 1)
		go func() { workErr <- work(ctx) }()
	}
	serveErr := serveInBackground(srv, ln, hs.cfg.TLSCert, hs.cfg.TLSKey)
	var err error
	select {
	case err = <-serveErr:
	case err = <-workErr: // the work ended by itself: it could not go on
		err = errors.Join(err, shutdown(ctx, srv, hs.cfg.ShutdownTimeout))
	case <-ctx.Done():
		hs.cfg.Logger.Info("stopping: finishing the requests in flight")
		if workErr != nil {
			err = <-workErr
		}
		err = errors.Join(err, shutdown(ctx, srv, hs.cfg.ShutdownTimeout))
	}
	stopHub()
	<-hubDone
	return errors.Join(ignoreClosed(err), hs.Store.Close())
}

// The relay's defaults.
const (
	RelayMaxBatch = relay.DefaultMaxBatch
	RelaySenders  = relay.DefaultSenders
	RelayTimeout  = relay.DefaultTimeout
)

// RelayConfig is how a relay is served (`fleetform hub relay`).
type RelayConfig struct {
	// Addr is where the agents post (HOST:PORT; port 0: any free port).
	Addr string
	// Hub is the hub's client (with a relay token), HubURL its URL as shown.
	Hub    *client.Client
	HubURL string
	// MaxBatch is the most reports per batch, Senders the batches in flight to the hub at
	// once, Timeout how long a batch may take before its agents hear 502 (0: the relay's
	// defaults, RelayMaxBatch, RelaySenders and RelayTimeout).
	MaxBatch, Senders int
	Timeout           time.Duration
	// TLSCert and TLSKey, when set, serve the agents HTTPS.
	TLSCert, TLSKey string
	// ShutdownTimeout is how long a stop waits for the reports in flight.
	ShutdownTimeout time.Duration
	// Out is told what is served (the process's stderr).
	Out    io.Writer
	Logger *slog.Logger
}

// Relay takes a site's agents' reports on cfg.Addr and forwards them to the hub in
// batches until ctx ends; the reports in flight are answered before it returns.
func Relay(ctx context.Context, cfg RelayConfig) error {
	rl := relay.New(cfg.Hub, relay.Options{MaxBatch: cfg.MaxBatch, Senders: cfg.Senders, Timeout: cfg.Timeout, Logger: cfg.Logger})
	ln, err := (&net.ListenConfig{}).Listen(ctx, "tcp", cfg.Addr)
	if err != nil {
		return err
	}
	fmt.Fprintf(cfg.Out, "fleetform hub relay: serving %s://%s (forwarding to %s)\n", scheme(cfg.TLSCert), ln.Addr(), repourl.Redact(cfg.HubURL))
	srv := newHTTPServer(rl, cfg.Logger)
	// The senders outlive the server: the reports in flight are answered before they stop.
	sendCtx, stopSending := context.WithCancel(context.WithoutCancel(ctx))
	sent := make(chan struct{})
	go func() {
		defer close(sent)
		rl.Run(sendCtx)
	}()
	serveErr := serveInBackground(srv, ln, cfg.TLSCert, cfg.TLSKey)
	select {
	case err = <-serveErr:
	case <-ctx.Done():
		cfg.Logger.Info("stopping: answering the reports in flight")
		err = shutdown(ctx, srv, cfg.ShutdownTimeout)
	}
	stopSending()
	<-sent
	return ignoreClosed(err)
}

func scheme(tlsCert string) string {
	if tlsCert != "" {
		return "https"
	}
	return "http"
}

// shutdown stops srv, waiting at most timeout for the requests in flight.
func shutdown(ctx context.Context, srv *http.Server, timeout time.Duration) error {
	shutdownCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), timeout)
	defer cancel()
	return srv.Shutdown(shutdownCtx)
}

// newHTTPServer is the server of hub serve and hub relay: bounded reads, errors logged.
func newHTTPServer(handler http.Handler, logger *slog.Logger) *http.Server {
	return &http.Server{
		Handler:           handler,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       time.Minute,
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
	}
}

// serveInBackground serves srv on ln (HTTPS when cert is set) and sends why it stopped.
func serveInBackground(srv *http.Server, ln net.Listener, cert, key string) <-chan error {
	serveErr := make(chan error, 1)
	go func() {
		if cert != "" {
			serveErr <- srv.ServeTLS(ln, cert, key)
			return
		}
		serveErr <- srv.Serve(ln)
	}()
	return serveErr
}

func ignoreClosed(err error) error {
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}

// secureCookies reports whether the UI's cookies are Secure: when serve terminates TLS, or
// when the address people use is https (a TLS-terminating proxy in front: requests then
// arrive over http).
func secureCookies(tlsCert, externalURL string) bool {
	return tlsCert != "" || strings.HasPrefix(strings.ToLower(externalURL), "https://")
}
