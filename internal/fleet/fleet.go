// Package fleet is fleetform's application layer: every use case (validate, schedule,
// explain, render, plan, apply, promote, review, watch, the application team's app flow) is
// a method of Fleet, built once from a Config. The CLI, serve and the web UI hold one and
// call it; they choose what each outcome means to their users (UsageError, RefusedError,
// InvalidError) and print or serve the results. Fleet runs the stages through package
// pipeline and owns the collaborators they share: the GitOps writer, the forge's pull
// requests, the hub, the cache and the commits' author.
package fleet

import (
	"cmp"
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/fleetform/fleetform/internal/access"
	"github.com/fleetform/fleetform/internal/app"
	"github.com/fleetform/fleetform/internal/authoring"
	"github.com/fleetform/fleetform/internal/controlplane"
	"github.com/fleetform/fleetform/internal/gitauth"
	"github.com/fleetform/fleetform/internal/gitops"
	"github.com/fleetform/fleetform/internal/pipeline"
	"github.com/fleetform/fleetform/internal/render"
)

// Config is what a Fleet is built from: where the control plane is and how it is read, the
// credentials, the cache, who commits, the forge and the hub. The CLI builds one from its
// flags and config file, serve from its own, tests directly.
type Config struct {
	// ControlPlane is the control plane's location: a directory, a git repository (path)
	// or a git URL.
	ControlPlane string
	// RenderSandbox, when set, renders applications' charts and kustomize builds in worker
	// processes bounded in time and memory (nil: in this process).
	RenderSandbox *app.Sandbox
	// ControlPlaneImplicit is set when nobody named the control plane (the working
	// directory): it is opened only if it is one.
	ControlPlaneImplicit bool
	// Read is how it is read: ref, layout, repo map, the GitOps repositories named outside
	// the control plane. Its Credentials and Logger are this Config's.
	Read controlplane.Options
	// Credentials choose what goes to which host (nil: none).
	Credentials *gitauth.Store
	// CacheDir keeps the clones of remote repositories and the record of the last clean
	// apply of each environment ("": the user's cache directory, under fleetform/).
	CacheDir string
	// Author signs the commits fleetform makes (default fleetform <fleetform@localhost>).
	Author Author
	// ForgeURL is the API base URL of the forge pull requests are opened on ("": the one of
	// the repository's host).
	ForgeURL string
	// Hub, when set, is where applies post their desired state and promotions check their
	// gates and record their decisions.
	Hub Hub
	// Rights decide what an identity may do, for the requests that name one (the service's);
	// nil: only admin tokens may.
	Rights Decider
	Logger *slog.Logger
}

// Decider answers whether an identity may make a request (*access.Rights).
type Decider interface {
	Decide(id access.Identity, req access.Request) access.Decision
}

// Author signs commits.
type Author struct{ Name, Email string }

// DefaultMaxAttempts bounds how many times a write re-reads its branch and is made again
// when someone else wrote in between.
const DefaultMaxAttempts = gitops.DefaultMaxAttempts

// DefaultAuthor signs commits when no author is given.
var DefaultAuthor = Author{Name: "fleetform", Email: "fleetform@localhost"}

// Fleet is fleetform's application layer: every use case (validate, schedule, explain,
// render, plan, apply, promote, review, watch, author, and the application team's app
// flow) as a method over one control plane and the collaborators they share. The CLI,
// serve and the web UI hold one and call it.
type Fleet struct {
	cfg Config
	// renders remembers, from one change of the control plane to the next, what rendered
	// without error (Author).
	renders *authoring.RenderCache
}

// New returns the Fleet of cfg.
func New(cfg Config) *Fleet {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Author == (Author{}) {
		cfg.Author = DefaultAuthor
	}
	cfg.Read.Credentials, cfg.Read.Logger = cfg.Credentials, cfg.Logger
	return &Fleet{cfg: cfg, renders: &authoring.RenderCache{}}
}

// Config returns what the Fleet was built from.
func (f *Fleet) Config() Config { return f.cfg }

// Logger is the Fleet's logger.
func (f *Fleet) Logger() *slog.Logger { return f.cfg.Logger }

// OpenControlPlane reads the control plane afresh.
func (f *Fleet) OpenControlPlane(ctx context.Context) (*controlplane.ControlPlane, error) {
	if f.cfg.ControlPlaneImplicit {
		if err := looksLikeControlPlane(f.cfg.ControlPlane); err != nil {
			return nil, err
		}
	}
	return controlplane.Open(ctx, f.cfg.ControlPlane, f.cfg.Read)
}

// looksLikeControlPlane checks that dir, taken as the control plane without being named,
// is one: it has environments/ (the folder layout) or .environments/ (Kalypso's). A folder
// that merely holds YAML (a project's testdata, examples) is not read by accident.
func looksLikeControlPlane(dir string) error {
	for _, d := range []string{"environments", ".environments"} {
		if fi, err := os.Stat(filepath.Join(dir, d)); err == nil && fi.IsDir() {
			return nil
		}
	}
	abs, _ := filepath.Abs(dir)
	return Usagef("no control plane named, and %s is not one (it has no environments/ nor .environments/): "+
		"pass --control-plane DIR or URL, set controlPlane: in fleetform.yaml, or start one with `fleetform init DIR`", abs)
}

// Environments returns the environments to work on: env, else every one the control plane
// declares (ErrNoEnvironment when it declares none).
func (f *Fleet) Environments(ctx context.Context, cp *controlplane.ControlPlane, env string) ([]string, error) {
	if env != "" {
		return []string{env}, nil
	}
	envs, _, err := cp.Environments(ctx)
	if err != nil {
		return nil, err
	}
	if len(envs) == 0 {
		return nil, controlplane.ErrNoEnvironment
	}
	names := make([]string, 0, len(envs))
	for _, e := range envs {
		names = append(names, e.Name)
	}
	return names, nil
}

// environmentChoice makes a load's SeveralEnvironmentsError (no environment named where
// several are declared) a UsageError; any other error stays as it is.
func environmentChoice(err error) error {
	var several *controlplane.SeveralEnvironmentsError
	if errors.As(err, &several) {
		return Usagef("--env is required: the control plane declares %s", strings.Join(several.Declared, ", "))
	}
	return err
}

// Load opens the control plane and runs the pipeline up to upTo for env (or the only
// environment there is).
func (f *Fleet) Load(ctx context.Context, env string, upTo pipeline.Stage) (*pipeline.Run, error) {
	cp, err := f.OpenControlPlane(ctx)
	if err != nil {
		return nil, err
	}
	r, err := pipeline.Load(ctx, cp, env, upTo, render.Options{})
	return r, environmentChoice(err)
}

// Target is where a run's environment is written: what override sets (a command line's
// --gitops, --branch, --path), else the GitOps repository named for it outside the control
// plane (the config file's gitops), else its GitOpsRepo through the repo map. An
// environment with none is a UsageError.
func (f *Fleet) Target(r *pipeline.Run, override gitops.Target) (gitops.Target, error) {
	t := gitops.TargetOf(r.ControlPlane, r.Snapshot, override)
	if t.Repo == "" {
		return t, Usagef("environment %s has no GitOpsRepo: declare one, or name its GitOps repository (--gitops, or gitops in the config file)",
			r.Snapshot.Environment)
	}
	return t, nil
}

// WriteOptions are how one plan or apply writes, beyond the Fleet's own settings.
type WriteOptions struct {
	// MassDeleteThreshold is the largest fraction of the deployment-target folders it owns
	// an apply may remove (0: the writer's default); AllowMassDelete lifts it.
	MassDeleteThreshold float64
	AllowMassDelete     bool
	// Diff keeps every changed file's unified diff in the plan.
	Diff bool
	// Progress, when set, is told how rendering goes (assignments done of total).
	Progress func(done, total int)
}

// writer is the GitOps writer of one plan or apply.
func (f *Fleet) writer(o WriteOptions) *gitops.Writer {
	return gitops.NewWriter(gitops.Options{MassDeleteThreshold: o.MassDeleteThreshold, AllowMassDelete: o.AllowMassDelete,
		Diff: o.Diff, Progress: o.Progress, Logger: f.cfg.Logger, CacheDir: f.gitopsCache(), Credentials: f.cfg.Credentials})
}

// cacheDir is where fleetform keeps what it caches ("" when there is nowhere).
func (f *Fleet) cacheDir() string {
	if f.cfg.CacheDir != "" {
		return f.cfg.CacheDir
	}
	base, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(base, "fleetform")
}

// gitopsCache is where the clones of remote repositories are kept: CacheDir itself when it
// is set, else fleetform/gitops in the user's cache directory.
func (f *Fleet) gitopsCache() string {
	if f.cfg.CacheDir != "" {
		return f.cfg.CacheDir
	}
	if dir := f.cacheDir(); dir != "" {
		return filepath.Join(dir, "gitops")
	}
	return filepath.Join(os.TempDir(), "fleetform-gitops")
}

// commitOptions are the commit options of the Fleet's author, with a subject ("": the
// generated one) and a bound on retries (0: the default).
func (f *Fleet) commitOptions(subject string, maxAttempts int) gitops.CommitOptions {
	return gitops.CommitOptions{AuthorName: f.cfg.Author.Name, AuthorEmail: f.cfg.Author.Email, Subject: subject,
		MaxAttempts: cmp.Or(maxAttempts, gitops.DefaultMaxAttempts)}
}
