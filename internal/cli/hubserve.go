package cli

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/fleetform/fleetform/internal/hub"
	"github.com/fleetform/fleetform/internal/hub/api"
	"github.com/fleetform/fleetform/internal/hub/postgres"
	"github.com/fleetform/fleetform/internal/hub/sqlite"
	"github.com/fleetform/fleetform/internal/redact"
	"github.com/fleetform/fleetform/internal/ui"
)

type hubServeOptions struct {
	addr            string
	db              string
	staleAfter      time.Duration
	retention       time.Duration
	tlsCert, tlsKey string
	shutdownTimeout time.Duration
	writers         int
	maxClockSkew    time.Duration
	tokenCacheTTL   time.Duration
}

func newHubServeCmd(e *env) *cobra.Command {
	var o hubServeOptions
	cmd := &cobra.Command{
		Use: "serve",
		Example: "  # on one machine, SQLite\n" +
			"  FLEETFORM_HUB_ADMIN_TOKEN=\"$(cat admin-token)\" fleetform hub serve --db sqlite:/var/lib/fleetform/hub.db\n" +
			"  # several replicas on PostgreSQL, behind TLS\n" +
			"  fleetform hub serve --db postgres://hub@db.example.com/hub --addr :8443 --tls-cert hub.crt --tls-key hub.key",
		Short: "Serve the hub's HTTP API",
		Long: "serve runs the hub on --db: sqlite:PATH (embedded, one process) or postgres://... (several\n" +
			"replicas behind a load balancer). The admin token is " + hubAdminTokenEnv + "; a new one\n" +
			"replaces (revokes) the one configured before and the generated one. When it is unset and\n" +
			"the store has no active admin token, one is generated, stored hashed and printed once on\n" +
			"stderr. SIGINT or SIGTERM stops accepting requests, finishes the ones in flight\n" +
			"(every report acknowledged is committed) and closes the store.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := o.check(); err != nil {
				return err
			}
			return o.run(cmd.Context(), e)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.addr, "addr", "127.0.0.1:8080", "address to listen on, HOST:PORT (port 0: any free port)")
	f.StringVar(&o.db, "db", "", "store: sqlite:PATH or postgres://USER@HOST/DB (required)")
	f.DurationVar(&o.staleAfter, "stale-after", hub.DefaultStaleAfter, "a cluster whose latest report is older counts as unknown")
	f.DurationVar(&o.retention, "retention", hub.DefaultRetention, "how long history events and superseded desired states are kept")
	f.StringVar(&o.tlsCert, "tls-cert", "", "serve HTTPS with this certificate (PEM; with --tls-key)")
	f.StringVar(&o.tlsKey, "tls-key", "", "private key of --tls-cert (PEM)")
	f.DurationVar(&o.shutdownTimeout, "shutdown-timeout", 30*time.Second, "how long a stop waits for the requests in flight")
	f.DurationVar(&o.maxClockSkew, "max-clock-skew", hub.DefaultMaxClockSkew, "how far ahead of the hub's clock a report's observedAt may be; later reports are rejected (400)")
	f.DurationVar(&o.tokenCacheTTL, "token-cache-ttl", hub.DefaultTokenCacheTTL, "how long a token lookup is kept in memory (0: not at all): a token revoked on another replica still works here that long; set it to the clusters' report interval to spare the store a read per report")
	f.IntVar(&o.writers, "ingest-writers", 0, "concurrent ingest transactions of this hub (PostgreSQL only; default 1: raise it when the database is far away and has cores to spare)")
	_ = cmd.MarkFlagRequired("db")
	return cmd
}

func (o *hubServeOptions) check() error {
	switch {
	case (o.tlsCert == "") != (o.tlsKey == ""):
		return failed(ExitUsage, errors.New("--tls-cert and --tls-key go together"))
	case o.staleAfter <= 0 || o.retention <= 0 || o.maxClockSkew <= 0:
		return failed(ExitUsage, errors.New("--stale-after, --retention and --max-clock-skew must be positive"))
	case o.writers < 0:
		return failed(ExitUsage, errors.New("--ingest-writers must not be negative"))
	case o.tokenCacheTTL < 0:
		return failed(ExitUsage, errors.New("--token-cache-ttl must not be negative"))
	}
	return nil
}

// hubStore is what serve needs of a store: the hub's Store, how many ingest writers suit it
// and whether it takes more than one.
type hubStore struct {
	store       hub.Store
	writers     int
	multiWriter bool
}

// openHubStore opens the store --db names.
func openHubStore(ctx context.Context, dsn string, logger *slog.Logger) (hubStore, error) {
	switch {
	case strings.HasPrefix(dsn, "sqlite:"):
		path := strings.TrimPrefix(strings.TrimPrefix(dsn, "sqlite:"), "//")
		if path == "" {
			return hubStore{}, failed(ExitUsage, errors.New("--db sqlite:PATH needs a file path"))
		}
		s, err := sqlite.Open(ctx, path)
		if err != nil {
			return hubStore{}, failed(ExitFailed, fmt.Errorf("open %s: %w", path, err))
		}
		return hubStore{store: s, writers: 1}, nil // SQLite has a single writer
	case strings.HasPrefix(dsn, "postgres://"), strings.HasPrefix(dsn, "postgresql://"):
		return openPostgresStore(ctx, dsn, logger)
	}
	return hubStore{}, failed(ExitUsage, fmt.Errorf("--db %q: want sqlite:PATH or postgres://USER@HOST/DB", dsn))
}

// openPostgresStore opens the PostgreSQL store. It takes several writers (and several hub
// replicas), but one writer per hub is the default: group commits then grow with the load,
// and on the 2-core benchmark machine one writer ingested 50% more than two or four, whose
// transactions wait on each other's counter rows (docs/benchmarks.md).
func openPostgresStore(ctx context.Context, dsn string, logger *slog.Logger) (hubStore, error) {
	s, err := postgres.Open(ctx, dsn, logger)
	if err != nil {
		return hubStore{}, failed(ExitFailed, fmt.Errorf("open %s: %w", redact.URL(dsn), err))
	}
	return hubStore{store: s, writers: 1, multiWriter: true}, nil
}

func (o *hubServeOptions) run(ctx context.Context, e *env) error {
	// main stops on these signals too; serve also handles them when run another way.
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	hs, err := o.start(ctx, e)
	if err != nil {
		return err
	}
	return o.serve(ctx, e, hs, hs.handler(), nil)
}

// hubServer is a hub with its store, metrics and API handler, as `hub serve` and `serve`
// run it.
type hubServer struct {
	hub     *hub.Hub
	store   hub.Store
	metrics *api.Metrics
	api     http.Handler
	ui      *ui.Handler
}

// start opens the store, makes the hub and settles the admin token (printing a generated
// one once).
func (o *hubServeOptions) start(ctx context.Context, e *env) (*hubServer, error) {
	st, err := openHubStore(ctx, o.db, e.Logger)
	if err != nil {
		return nil, err
	}
	if o.writers > 0 && st.multiWriter {
		st.writers = o.writers
	}
	metrics := api.NewMetrics()
	ttl := o.tokenCacheTTL
	if ttl == 0 {
		ttl = -1 // hub.Options: negative is no cache, zero its default
	}
	h := hub.New(st.store, hub.Options{StaleAfter: o.staleAfter, Retention: o.retention, MaxClockSkew: o.maxClockSkew,
		Writers: st.writers, Logger: e.Logger, Observer: metrics, TokenCacheTTL: ttl})
	generated, err := h.Bootstrap(ctx, os.Getenv(hubAdminTokenEnv))
	if err != nil {
		_ = st.store.Close()
		return nil, failed(ExitFailed, fmt.Errorf("%s: %w", hubAdminTokenEnv, err))
	}
	if generated != "" {
		fmt.Fprintf(e.Stderr, "fleetform hub: generated the admin token (shown once; set %s to choose it):\n%s\n", hubAdminTokenEnv, generated)
	}
	web, err := ui.New(h, ui.Options{Logger: e.Logger, SecureCookies: o.tlsCert != "", DriftAfter: o.staleAfter})
	if err != nil {
		_ = st.store.Close()
		return nil, failed(ExitFailed, err)
	}
	hs := &hubServer{hub: h, store: st.store, metrics: metrics, ui: web,
		api: api.New(h, api.Options{Logger: e.Logger, Metrics: metrics, DriftAfter: o.staleAfter})}
	return hs, nil
}

// handler serves the API and the web UI on one port.
func (hs *hubServer) handler() http.Handler { return ui.Mount(hs.api, hs.ui) }

// serve runs the hub, the server of handler and work (when not nil) until ctx ends, then
// drains: work first (it finishes what is in flight), the server (requests in flight wait
// for their reports' commit), then ingest, then the store.
func (o *hubServeOptions) serve(ctx context.Context, e *env, hs *hubServer, handler http.Handler, work func(context.Context) error) error {
	ln, err := (&net.ListenConfig{}).Listen(ctx, "tcp", o.addr)
	if err != nil {
		_ = hs.store.Close()
		return failed(ExitFailed, err)
	}
	scheme := "http"
	if o.tlsCert != "" {
		scheme = "https"
	}
	fmt.Fprintf(e.Stderr, "fleetform hub: serving %s://%s\n", scheme, ln.Addr())
	srv := newHTTPServer(handler, e.Logger)
	runCtx, stopHub := context.WithCancel(context.WithoutCancel(ctx))
	hubDone := make(chan struct{})
	go func() {
		defer close(hubDone)
		_ = hs.hub.Run(runCtx)
	}()
	var workErr chan error // nil without work: never ready
	if work != nil {
		workErr = make(chan error, 1)
		go func() { workErr <- work(ctx) }()
	}
	serveErr := serveInBackground(srv, ln, o.tlsCert, o.tlsKey)
	select {
	case err = <-serveErr:
	case err = <-workErr: // the work ended by itself: it could not go on
		shutdownCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), o.shutdownTimeout)
		err = errors.Join(err, srv.Shutdown(shutdownCtx))
		cancel()
	case <-ctx.Done():
		e.Logger.Info("stopping: finishing the requests in flight")
		if workErr != nil {
			err = <-workErr
		}
		shutdownCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), o.shutdownTimeout)
		err = errors.Join(err, srv.Shutdown(shutdownCtx))
		cancel()
	}
	stopHub()
	<-hubDone
	err = errors.Join(ignoreClosed(err), hs.store.Close())
	if err != nil {
		return failed(ExitFailed, err)
	}
	return nil
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
