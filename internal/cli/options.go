package cli

import (
	"context"
	"errors"
	"maps"
	"net/mail"
	"os"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/fleetform/fleetform/internal/app"
	"github.com/fleetform/fleetform/internal/cli/command"
	"github.com/fleetform/fleetform/internal/controlplane"
	"github.com/fleetform/fleetform/internal/fleet"
	"github.com/fleetform/fleetform/internal/pipeline"
)

// controlPlaneOptions are the flags every command that reads a control plane takes.
type controlPlaneOptions struct {
	controlPlane string
	env          string
	ref          string
	commonRef    string
	layout       string
	repoMap      []string
	configFile   string
	// envs are the environments --env named, where the command takes several (severalEnvs).
	envs        []string
	severalEnvs bool
	// trusted are the other repository or API URLs the command line names (see credentials).
	trusted []string

	resolved bool       // resolve ran
	implicit bool       // the control plane is the working directory, named by nobody
	file     fileConfig // the config file, once resolved
}

func (o *controlPlaneOptions) bind(cmd *cobra.Command, e *env, envRequired bool) {
	o.bindRepo(cmd)
	f := cmd.Flags()
	usage := "environment"
	if !envRequired {
		usage = "environment (default: every environment)"
	}
	f.Var(envValue{o}, "env", usage)
	f.StringVar(&o.commonRef, "common-ref", "", "read common content at this ref instead of the BaseRepo pin (what-if)")
	_ = cmd.RegisterFlagCompletionFunc("env", o.completeEnvironments(e)) // the flag exists
}

// envValue is --env: one environment. Another one is refused (never the last silently
// winning), unless the command takes several: then --env dev --env prod and --env dev,prod
// name the same two. Naming one twice is naming it once.
type envValue struct{ o *controlPlaneOptions }

func (v envValue) String() string { return v.o.env }
func (v envValue) Type() string   { return "string" }

func (v envValue) Set(s string) error {
	var names []string
	for n := range strings.SplitSeq(s, ",") {
		if n = strings.TrimSpace(n); n != "" {
			names = append(names, n)
		}
	}
	for _, n := range names {
		if !slices.Contains(v.o.envs, n) {
			v.o.envs = append(v.o.envs, n)
		}
	}
	if !v.o.severalEnvs && len(v.o.envs) > 1 {
		return errors.New("this command takes one environment (run it once per environment)")
	}
	if len(v.o.envs) > 0 {
		v.o.env = v.o.envs[0]
	}
	return nil
}

// bindRepo binds the flags that say how to read the control plane (not which environment).
func (o *controlPlaneOptions) bindRepo(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringVar(&o.controlPlane, "control-plane", "", "control plane: a directory, a git repository (path) or a git URL (default: the config file's controlPlane, else the working directory if it has environments/ or .environments/)")
	f.StringVar(&o.ref, "ref", "", "ref to read: the tip in the folder layout, the main branch in the Kalypso layout")
	f.StringVar(&o.layout, "layout", "", "repository layout: kalypso or folder (default: detected)")
	f.StringArrayVar(&o.repoMap, "repo-map", nil, "map a repository URL to a local path or git repository: URL=PATH (repeatable)")
	f.StringVar(&o.configFile, "config", os.Getenv("FLEETFORM_CONFIG"),
		"config file (controlPlane, gitops, repoMap, layout, credentials); default $FLEETFORM_CONFIG, else fleetform.yaml or .fleetform.yaml in the working directory or a parent")
}

// platformOptions merges the config file and flags (flags win).
func (o *controlPlaneOptions) platformOptions(e *env) (controlplane.Options, error) {
	opts := controlplane.Options{RepoMap: controlplane.RepoMap{}, Ref: o.ref, CommonRef: o.commonRef, Logger: e.Logger}
	if err := o.resolve(e); err != nil {
		return opts, err
	}
	maps.Copy(opts.RepoMap, o.file.RepoMap)
	opts.GitOps = o.file.GitOps
	opts.Layout = controlplane.Layout(o.file.Layout)
	for _, m := range o.repoMap {
		url, p, ok := strings.Cut(m, "=")
		if !ok || url == "" || p == "" {
			return opts, command.Usagef("--repo-map %q: want URL=PATH", m)
		}
		opts.RepoMap[url] = p
	}
	if o.layout != "" {
		opts.Layout = controlplane.Layout(o.layout)
	}
	switch opts.Layout {
	case controlplane.LayoutAuto, controlplane.LayoutKalypso, controlplane.LayoutFolder:
	default:
		return opts, command.Usagef("--layout %q: want kalypso or folder", opts.Layout)
	}
	return opts, nil
}

// cacheDirEnv names the environment variable of fleetform's cache directory.
const cacheDirEnv = "FLEETFORM_CACHE_DIR"

// config is the application layer's configuration from the flags and the config file (the
// commands add their author, forge and hub).
func (o *controlPlaneOptions) config(e *env) (fleet.Config, error) {
	read, err := o.platformOptions(e)
	if err != nil {
		return fleet.Config{}, err
	}
	// FLEETFORM_GIT_TOKEN and the legacy forge token go to the hosts the command line names:
	// the control plane's and those of o.trusted (--gitops, --forge-url).
	creds, err := fleet.Credentials(o.configFile, o.file.Credentials, o.controlPlane, o.trusted, e.Logger)
	if err != nil {
		return fleet.Config{}, err
	}
	var sandbox *app.Sandbox
	if exe, err := os.Executable(); err == nil {
		sandbox = app.NewSandbox(exe) // charts and kustomize builds render in a bounded worker: this executable, run as one
	}
	return fleet.Config{ControlPlane: o.controlPlane, ControlPlaneImplicit: o.implicit, RenderSandbox: sandbox, Read: read, Credentials: creds, CacheDir: os.Getenv(cacheDirEnv),
		Logger: e.Logger}, nil
}

// fleet is the application layer of a command that only reads the control plane.
func (o *controlPlaneOptions) fleet(e *env) (*fleet.Fleet, error) {
	cfg, err := o.config(e)
	if err != nil {
		return nil, err
	}
	return fleet.New(cfg), nil
}

// open opens the control plane.
func (o *controlPlaneOptions) open(ctx context.Context, e *env) (*controlplane.ControlPlane, error) {
	f, err := o.fleet(e)
	if err != nil {
		return nil, err
	}
	return f.OpenControlPlane(ctx)
}

// pipeline opens the control plane and runs the pipeline up to upTo for the one environment
// to work on (--env, or the only one there is).
func (o *controlPlaneOptions) pipeline(ctx context.Context, e *env, upTo pipeline.Stage) (*pipeline.Run, error) {
	f, err := o.fleet(e)
	if err != nil {
		return nil, err
	}
	return f.Load(ctx, o.env, upTo)
}

// author parses --author ("Name <email>").
func author(s string) (fleet.Author, error) {
	addr, err := mail.ParseAddress(s)
	if err != nil {
		return fleet.Author{}, command.Usagef("--author %q: want \"Name <email>\"", s)
	}
	return fleet.Author{Name: addr.Name, Email: addr.Address}, nil
}
