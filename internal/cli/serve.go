package cli

import (
	"context"
	"errors"
	"net/mail"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/fleetform/fleetform/internal/authoring"
	"github.com/fleetform/fleetform/internal/cli/command"
	"github.com/fleetform/fleetform/internal/controlplane"
	"github.com/fleetform/fleetform/internal/fleet"
	"github.com/fleetform/fleetform/internal/hub"
	"github.com/fleetform/fleetform/internal/serve"
)

type serveOptions struct {
	cp        controlPlaneOptions
	srv       hubServeOptions
	gitops    string
	envs      []string
	dataDir   string
	interval  time.Duration
	pr        bool
	authoring string
	forgeURL  string
	author    string
	promote   bool
}

func newServeCmd(e *env) *cobra.Command {
	var o serveOptions
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run fleetform as a service: watch the sources, apply what changed, promote, and serve the hub's API",
		Long: "serve watches the control plane and every repository it names (workload registrations,\n" +
			"BaseRepos), polled every --interval and at once on a webhook, and applies each environment a\n" +
			"change reaches, exactly as `fleetform apply` does (--pr opens pull requests instead); it\n" +
			"promotes the environments whose chain says automatic as soon as the gates pass, and serves\n" +
			"the hub's API, webhooks (POST /api/v1/webhooks/git), /healthz, /readyz and /metrics on one\n" +
			"port. The store is --db (default: SQLite in --data-dir); on PostgreSQL several replicas\n" +
			"share the work: one leads, all answer. SIGTERM finishes the apply in flight and stops.",
		Example: "  # on a laptop: the example control plane, SQLite in ./.fleetform\n" +
			"  fleetform serve --control-plane examples/platform --config examples/fleetform.yaml --gitops /tmp/gitops.git\n" +
			"  # three replicas on PostgreSQL, webhooks from GitHub\n" +
			"  FLEETFORM_WEBHOOK_SECRET=... fleetform serve --control-plane https://github.com/org/platform --db postgres://fleetform@db/fleetform --addr 0.0.0.0:8080",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := o.validate(cmd, e); err != nil {
				return err
			}
			return o.run(cmd.Context(), e)
		},
	}
	o.cp.bindRepo(cmd)
	f := cmd.Flags()
	f.StringVar(&o.srv.addr, "addr", "127.0.0.1:8080", "address to listen on, HOST:PORT")
	f.StringVar(&o.srv.db, "db", "", "store: sqlite:PATH or postgres://USER@HOST/DB (default: SQLite in --data-dir)")
	f.StringVar(&o.dataDir, "data-dir", ".fleetform", "where serve keeps its SQLite store and git cache")
	f.DurationVar(&o.interval, "interval", time.Minute, "how often every source is polled")
	f.StringArrayVar(&o.envs, "env", nil, "environment to serve (repeatable; default: every one)")
	f.StringVar(&o.gitops, "gitops", "", "GitOps repository of every served environment (each on its own branch); default: the config file's gitops, else each GitOpsRepo")
	f.BoolVar(&o.pr, "pr", false, "open pull requests instead of moving the GitOps branches (as apply --pr)")
	f.StringVar(&o.forgeURL, "forge-url", "", "API base URL of the forge, for --pr and --authoring pr")
	f.StringVar(&o.authoring, "authoring", "", "what the authoring API and the UI do with a change: commit (a local control plane's default), "+
		"push or pr (a control plane URL's default: a pull request per change)")
	f.StringVar(&o.author, "author", "fleetform <fleetform@localhost>", "author of the commits, as \"Name <email>\"")
	f.BoolVar(&o.promote, "promote", true, "promote the environments whose chain says automatic")
	f.DurationVar(&o.srv.staleAfter, "stale-after", hub.DefaultStaleAfter, "a cluster whose latest report is older counts as unknown")
	f.DurationVar(&o.srv.retention, "retention", hub.DefaultRetention, "how long history events and superseded desired states are kept")
	f.DurationVar(&o.srv.maxClockSkew, "max-clock-skew", hub.DefaultMaxClockSkew, "how far ahead of the hub's clock a report's observedAt may be")
	f.StringVar(&o.srv.tlsCert, "tls-cert", "", "serve HTTPS with this certificate (PEM; with --tls-key)")
	f.StringVar(&o.srv.tlsKey, "tls-key", "", "private key of --tls-cert (PEM)")
	f.DurationVar(&o.srv.shutdownTimeout, "shutdown-timeout", 30*time.Second, "how long a stop waits for the requests in flight")
	o.srv.sso.bind(cmd)
	return cmd
}

// validate settles the options: flags, then the config file's serve section, then defaults.
func (o *serveOptions) validate(cmd *cobra.Command, e *env) error {
	if err := o.cp.resolve(e); err != nil {
		return err
	}
	o.fromConfig(cmd, o.cp.file.Serve)
	o.srv.sso.fromConfig(cmd, o.cp.file.Serve.OIDC)
	if o.srv.db == "" {
		o.srv.db = "sqlite:" + filepath.Join(o.dataDir, "fleetform.db")
	}
	if o.gitops != "" {
		o.cp.trusted = append(o.cp.trusted, o.gitops)
	}
	o.cp.trusted = append(o.cp.trusted, o.forgeURL)
	switch {
	case o.interval <= 0:
		return command.Usage(errors.New("--interval must be positive"))
	case o.srv.shutdownTimeout <= 0:
		o.srv.shutdownTimeout = 30 * time.Second
	}
	if _, err := mail.ParseAddress(o.author); err != nil {
		return command.Usagef("--author %q: want \"Name <email>\"", o.author)
	}
	if err := o.checkAuthoring(); err != nil {
		return err
	}
	return o.srv.check()
}

// fromConfig takes from the config file what no flag set.
func (o *serveOptions) fromConfig(cmd *cobra.Command, c serveConfig) {
	set := func(flag string, apply func()) {
		if !cmd.Flags().Changed(flag) {
			apply()
		}
	}
	set("addr", func() { o.srv.addr = orString(c.Addr, o.srv.addr) })
	set("db", func() { o.srv.db = orString(c.DB, o.srv.db) })
	set("data-dir", func() { o.dataDir = orString(c.DataDir, o.dataDir) })
	set("interval", func() {
		if c.Interval.Duration > 0 {
			o.interval = c.Interval.Duration
		}
	})
	set("env", func() {
		if len(c.Environments) > 0 {
			o.envs = c.Environments
		}
	})
	set("pr", func() { o.pr = o.pr || c.PR })
	set("forge-url", func() { o.forgeURL = orString(c.ForgeURL, o.forgeURL) })
	set("authoring", func() { o.authoring = orString(c.Authoring, o.authoring) })
}

// checkAuthoring settles --authoring (fleet.AuthoringMode); --pr makes pr the default.
func (o *serveOptions) checkAuthoring() error {
	mode, err := fleet.AuthoringMode(o.cp.controlPlane, o.authoring, o.pr)
	if err != nil {
		return command.Usage(err)
	}
	o.authoring = string(mode)
	return nil
}

func orString(v, def string) string {
	if v != "" {
		return v
	}
	return def
}

func (o *serveOptions) run(ctx context.Context, e *env) error {
	if err := os.MkdirAll(o.dataDir, 0o700); err != nil {
		return err
	}
	cfg, err := o.cp.config(e)
	if err != nil {
		return err
	}
	if o.gitops != "" {
		cfg.Read.GitOps = map[string]string{controlplane.EveryEnvironment: o.gitops}
	}
	if cfg.CacheDir == "" {
		cfg.CacheDir = filepath.Join(o.dataDir, "cache")
	}
	cfg.Author, _ = author(o.author) // validated
	cfg.ForgeURL = o.forgeURL
	hs, err := serve.StartHub(ctx, o.srv.config(e))
	if err != nil {
		return err
	}
	cfg.Hub = fleet.LocalHub(hs.Hub)
	cfg.Rights = hs.Rights
	f := fleet.New(cfg)
	opts := serve.Options{Fleet: f, Environments: o.envs, Interval: o.interval, PullRequests: o.pr, Hub: hs.Hub,
		Promote: o.promote, Rights: hs.Rights, Approvals: hs.Approvals, Metrics: serve.NewMetrics(hs.Metrics.Registry()), Logger: e.Logger}
	if l, ok := hs.Store.(hub.Leadership); ok {
		opts.Leadership = l
	}
	svc := serve.New(opts)
	if err := svc.Lead(ctx); err != nil {
		return errors.Join(err, hs.Close())
	}
	hs.UI.SetChain(svc.Chain)
	hs.UI.SetScheduler(svc)
	hs.UI.SetPromotions(svc.Promotions())
	hs.UI.SetSyncer(svc)
	webhooks := serve.NewWebhooks(os.Getenv(serve.WebhookSecretEnv), svc, e.Logger)
	changes := o.changes(e, hs, svc, f)
	hs.UI.SetChanges(changes)
	return hs.Serve(ctx, serve.Handler(hs.Handler(), hs.Hub, svc, webhooks, changes.Handler()), svc.Run)
}

// changes is the authoring API: changes committed to the control plane, pushed to it or
// proposed as pull requests (--authoring), recorded in the hub's history, and applied at
// once.
func (o *serveOptions) changes(e *env, hs *serve.HubServer, svc *serve.Service, f *fleet.Fleet) *serve.ControlPlaneChanges {
	return serve.NewControlPlaneChanges(serve.ChangesOptions{Fleet: f, Hub: hs.Hub, Mode: authoring.Mode(o.authoring), Logger: e.Logger,
		Applied: svc.Authored})
}
