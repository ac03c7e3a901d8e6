package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/fleetform/fleetform/internal/authoring"
	"github.com/fleetform/fleetform/internal/cli/command"
	"github.com/fleetform/fleetform/internal/fleet"
)

type onboardClusterOptions struct {
	cp          controlPlaneOptions
	hub         hubOptions
	out         command.Output
	env         string
	clusterType string
	labels      []string
	reconciler  string
	showToken   bool
	rotate      bool
	agentImage  string
}

// stdoutIsTerminal tells whether w is a terminal (a variable for tests).
var stdoutIsTerminal = isTerminal

// isTerminal tells whether w, or the stream it writes to (Unwrap), is a terminal.
func isTerminal(w io.Writer) bool {
	for {
		u, ok := w.(interface{ Unwrap() io.Writer })
		if !ok {
			break
		}
		w = u.Unwrap()
	}
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

func newOnboardClusterCmd(e *env) *cobra.Command {
	var o onboardClusterOptions
	cmd := &cobra.Command{
		Use: "cluster NAME --env E --cluster-type CT [--label k=v]... [--reconciler flux|argocd|host] [--hub URL]",
		Example: "  # a Flux cluster: register it and print what it needs; pipe it into kubectl apply -f -\n" +
			"  FLEETFORM_HUB_TOKEN=... fleetform onboard cluster plant-lyon-1 --env dev --cluster-type plant-lyon --label site=lyon --hub https://hub.example.com -o yaml\n" +
			"  # a host (Ansible): a shell script to run as root on it\n" +
			"  FLEETFORM_HUB_TOKEN=... fleetform onboard cluster line-7-vm-3 --env prod --cluster-type vm-line --hub https://hub.example.com\n" +
			"  # only the reconciler's objects, nothing registered\n" +
			"  fleetform onboard cluster plant-lyon-2 --env dev --cluster-type plant-lyon",
		Short: "Register a cluster with the hub and print everything it needs",
		Long: "onboard cluster registers the cluster with the hub (a cluster token, as hub register does)\n" +
			"and prints what the cluster needs. For Flux: a GitRepository on the environment's GitOps\n" +
			"branch and a Kustomization of the cluster type's folder; for Argo CD: the Application of that\n" +
			"folder; with the reporting agent's objects (deploy/agent) and its token in a Secret; as YAML\n" +
			"for kubectl apply -f - (-o json: the same, with what was resolved, for machines). For a host:\n" +
			"a shell script installing the host agent's token, systemd service and timer.\n\n" +
			"The GitOps repository, branch and folder come from the environment's GitOpsRepo in the control\n" +
			"plane; the reconciler, unless --reconciler says, from the cluster type's reconciler template.\n" +
			"Without --hub nothing is registered and there is no agent: only the reconciler's objects.\n\n" +
			"No token is printed to a terminal unless --show-token: when stdout is a terminal, nothing is\n" +
			"registered and the Secret holds a placeholder (a preview); pipe the output into kubectl (or a\n" +
			"file) to register the cluster and print its token. --rotate issues a new token for a cluster\n" +
			"already registered (the old one stops working). Needs the admin token in " + command.HubTokenEnv + ".",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.check(args[0]); err != nil {
				return err
			}
			return o.run(cmd.Context(), e, args[0])
		},
	}
	o.cp.bindRepo(cmd)
	o.hub.Bind(cmd)
	o.out.Bind(cmd)
	f := cmd.Flags()
	f.StringVar(&o.env, "env", "", "environment of the cluster (required)")
	f.StringVar(&o.clusterType, "cluster-type", "", "cluster type of the cluster (required)")
	f.StringArrayVar(&o.labels, "label", nil, "label KEY=VALUE of the cluster on the hub (repeatable)")
	f.StringVar(&o.reconciler, "reconciler", "", "flux, argocd or host (default: from the cluster type's reconciler template)")
	f.BoolVar(&o.showToken, "show-token", false, "print the token even to a terminal")
	f.BoolVar(&o.rotate, "rotate", false, "issue a new token for a cluster already registered")
	f.StringVar(&o.agentImage, "agent-image", "", "image of the reporting agent (default: ghcr.io/fleetform/fleetform at this binary's release, else deploy/agent's)")
	_ = cmd.MarkFlagRequired("env")
	_ = cmd.MarkFlagRequired("cluster-type")
	_ = cmd.RegisterFlagCompletionFunc("env", o.cp.completeEnvironments(e)) // the flag exists
	return cmd
}

func (o *onboardClusterOptions) check(name string) error {
	if err := o.out.Check(); err != nil {
		return err
	}
	switch o.reconciler {
	case "", authoring.ReconcilerFlux, authoring.ReconcilerArgoCD, authoring.ReconcilerHost:
	default:
		return command.Usagef("--reconciler %q: want flux, argocd or host", o.reconciler)
	}
	if err := authoring.CheckName("cluster", name); err != nil {
		return command.Usage(err)
	}
	if o.hub.URL == "" && (o.showToken || o.rotate || len(o.labels) > 0) {
		return command.Usage(errors.New("--show-token, --rotate and --label register the cluster: they need --hub"))
	}
	return nil
}

func (o *onboardClusterOptions) run(ctx context.Context, e *env, name string) error {
	labels, err := labelsFlag(o.labels)
	if err != nil {
		return err
	}
	f, err := o.cp.fleet(e)
	if err != nil {
		return err
	}
	preview := o.hub.URL != "" && !o.showToken && stdoutIsTerminal(e.Stdout)
	var reg fleet.Registrar
	if o.hub.URL != "" && !preview {
		if reg, err = o.hub.Client(); err != nil {
			return err
		}
	}
	b, err := f.OnboardCluster(ctx, fleet.OnboardClusterRequest{Name: name, Environment: o.env, ClusterType: o.clusterType,
		Reconciler: o.reconciler, HubURL: o.hub.URL, Labels: labels, Rotate: o.rotate, AgentImage: agentImage(o.agentImage, Version())}, reg)
	if err != nil {
		return err
	}
	o.summary(e, b, preview)
	return o.print(e.Stdout, b)
}

// summary says on stderr what was done and what is next.
func (o *onboardClusterOptions) summary(e *env, b *authoring.ClusterBootstrap, preview bool) {
	switch {
	case preview:
		fmt.Fprintf(e.Stderr, "preview: stdout is a terminal, so %s is not registered and its token is not printed;\n"+
			"pipe the output (| kubectl apply -f -, > file) to register it, or pass --show-token\n", b.Cluster)
	case b.Hub == "":
		fmt.Fprintf(e.Stderr, "no --hub: %s is not registered, and has no reporting agent\n", b.Cluster)
	default:
		fmt.Fprintf(e.Stderr, "registered %s on %s (environment %s, cluster type %s)\n", b.Cluster, b.Hub, b.Environment, b.ClusterType)
	}
	fmt.Fprintf(e.Stderr, "%s reads %s, branch %s, folder %s\n", b.Reconciler, b.GitOps.Repo, b.GitOps.Branch,
		authoring.ClusterFolder(b.GitOps, b.ClusterType))
	if b.GitOps.Unreachable() {
		fmt.Fprintf(e.Stderr, "warning: the GitOps repository %s is a local path, which a cluster cannot read: "+
			"give the environment's GitOpsRepo the repository's URL (or the config file's gitops)\n", b.GitOps.Repo)
	}
	for _, n := range b.Notes {
		fmt.Fprintln(e.Stderr, "note:", n)
	}
}

// print writes the bootstrap: YAML for kubectl (text and -o yaml), a shell script for a host
// (text), the whole document with -o json (and -o yaml for a host).
func (o *onboardClusterOptions) print(w io.Writer, b *authoring.ClusterBootstrap) error {
	host := b.Reconciler == authoring.ReconcilerHost
	if o.out.Format == "json" || (o.out.Format == "yaml" && host) {
		return o.out.Write(w, b, nil)
	}
	if host {
		_, err := io.WriteString(w, b.Script())
		return err
	}
	data, err := b.YAML()
	if err != nil {
		return err
	}
	_, err = w.Write(data)
	return err
}

// agentRepository is where the agent's images are published.
const agentRepository = "ghcr.io/fleetform/fleetform"

// agentImage is the agent's image: the one asked for, else the image of this binary's own
// release (a version such as v1.4.2: agents run what the command line is), else "" (deploy/
// agent's, for a development build).
func agentImage(asked, version string) string {
	if asked != "" {
		return asked
	}
	if releaseVersion.MatchString(version) {
		return agentRepository + ":" + version
	}
	return ""
}

// releaseVersion is a release's version: v, then major.minor.patch.
var releaseVersion = regexp.MustCompile(`^v[0-9]+\.[0-9]+\.[0-9]+$`)
