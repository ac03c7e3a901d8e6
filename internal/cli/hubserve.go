package cli

import (
	"context"
	"errors"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/fleetform/fleetform/internal/cli/command"
	"github.com/fleetform/fleetform/internal/hub"
	"github.com/fleetform/fleetform/internal/serve"
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
	sso             ssoOptions
	// ssoConfig is sso checked, with its secrets read.
	ssoConfig serve.SSO
	// configFile holds the hub section (hub serve only).
	configFile string
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
			"replicas behind a load balancer). The admin token is " + serve.AdminTokenEnv + "; a new one\n" +
			"replaces (revokes) the one configured before and the generated one. When it is unset and\n" +
			"the store has no active admin token, one is generated, stored hashed and printed once on\n" +
			"stderr. SIGINT or SIGTERM stops accepting requests, finishes the ones in flight\n" +
			"(every report acknowledged is committed) and closes the store.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := o.readConfig(cmd); err != nil {
				return err
			}
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
	f.StringVar(&o.configFile, "config", os.Getenv("FLEETFORM_CONFIG"), "config file whose hub section sets what these flags set (oidc); default $FLEETFORM_CONFIG")
	o.sso.bind(cmd)
	_ = cmd.MarkFlagRequired("db")
	return cmd
}

// readConfig takes the config file's hub section for what no flag set.
func (o *hubServeOptions) readConfig(cmd *cobra.Command) error {
	if o.configFile == "" {
		return nil
	}
	fc, err := readConfig(o.configFile)
	if err != nil {
		return command.Usage(err)
	}
	o.sso.fromConfig(cmd, fc.Hub.OIDC)
	return nil
}

func (o *hubServeOptions) check() error {
	switch {
	case (o.tlsCert == "") != (o.tlsKey == ""):
		return command.Usage(errors.New("--tls-cert and --tls-key go together"))
	case o.staleAfter <= 0 || o.retention <= 0 || o.maxClockSkew <= 0:
		return command.Usage(errors.New("--stale-after, --retention and --max-clock-skew must be positive"))
	case o.writers < 0:
		return command.Usage(errors.New("--ingest-writers must not be negative"))
	case o.tokenCacheTTL < 0:
		return command.Usage(errors.New("--token-cache-ttl must not be negative"))
	}
	var err error
	o.ssoConfig, err = o.sso.config()
	return err
}

// config is how the flags say to serve the hub.
func (o *hubServeOptions) config(e *env) serve.HubConfig {
	return serve.HubConfig{Addr: o.addr, DB: o.db, StaleAfter: o.staleAfter, Retention: o.retention, MaxClockSkew: o.maxClockSkew,
		TokenCacheTTL: o.tokenCacheTTL, Writers: o.writers, TLSCert: o.tlsCert, TLSKey: o.tlsKey, ShutdownTimeout: o.shutdownTimeout,
		AdminToken: os.Getenv(serve.AdminTokenEnv), SSO: o.ssoConfig, Out: e.Stderr, Logger: e.Logger}
}

func (o *hubServeOptions) run(ctx context.Context, e *env) error {
	// main stops on these signals too; serve also handles them when run another way.
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	hs, err := serve.StartHub(ctx, o.config(e))
	if err != nil {
		return err
	}
	return hs.Serve(ctx, hs.Handler(), nil)
}
