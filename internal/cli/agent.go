package cli

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/fleetform/fleetform/internal/agent"
	"github.com/fleetform/fleetform/internal/agent/host"
	"github.com/fleetform/fleetform/internal/agent/kube"
	"github.com/fleetform/fleetform/internal/hub"
	"github.com/fleetform/fleetform/internal/hub/client"
)

// agentHubOptions are the flags every agent shares: the hub, the cluster and its token.
type agentHubOptions struct {
	hub       string
	cluster   string
	tokenFile string
	heartbeat time.Duration
}

func (o *agentHubOptions) bind(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringVar(&o.hub, "hub", "", "hub URL (required)")
	f.StringVar(&o.cluster, "cluster", "", "name the cluster or host is registered under on the hub (required)")
	f.StringVar(&o.tokenFile, "token-file", "", "file holding the cluster's token, read before every report; default: $FLEETFORM_AGENT_TOKEN")
	f.DurationVar(&o.heartbeat, "heartbeat", time.Minute, "send the state again after this long without a change")
}

// poster checks the flags and returns the Poster they describe.
func (o *agentHubOptions) poster() (*agent.HTTPPoster, error) {
	if o.hub == "" || o.cluster == "" {
		return nil, failed(ExitUsage, errors.New("--hub and --cluster are required"))
	}
	if _, err := client.New(o.hub, "", nil); err != nil {
		return nil, failed(ExitUsage, fmt.Errorf("--hub: %w", err))
	}
	token := agent.TokenSource(nil)
	switch env := os.Getenv("FLEETFORM_AGENT_TOKEN"); {
	case o.tokenFile != "":
		path := o.tokenFile
		if _, err := os.Stat(path); err != nil {
			return nil, failed(ExitUsage, fmt.Errorf("--token-file: %w", err))
		}
		token = func() (string, error) {
			b, err := os.ReadFile(path)
			return strings.TrimSpace(string(b)), err
		}
	case env != "":
		token = func() (string, error) { return env, nil }
	default:
		return nil, failed(ExitUsage, errors.New("no token: set FLEETFORM_AGENT_TOKEN or --token-file"))
	}
	p, err := agent.NewHTTPPoster(o.hub, token, nil)
	if err != nil {
		return nil, failed(ExitUsage, fmt.Errorf("--hub: %w", err))
	}
	return p, nil
}

func newAgentCmd(e *env) *cobra.Command {
	cmd := &cobra.Command{
		Use: "agent",
		Example: "  fleetform agent kubernetes --hub https://hub.example.com --cluster edge-munich-1 --token-file /var/run/fleetform/token\n" +
			"  fleetform agent host --hub https://hub.example.com --cluster line-7 --gitops https://git.example.com/platform-gitops --branch prod --cluster-type vm-line",
		Short: "Report what a cluster or host reconciled to the hub",
		Long: "agent runs next to a reconciler and reports its state to the hub: `agent kubernetes` in a\n" +
			"cluster running Flux or Argo CD, `agent host` on a VM or edge box that applies the Ansible\n" +
			"playbooks of its cluster type. Both keep working when the hub is unreachable and send the\n" +
			"latest state when it returns. See docs/agents.md.",
	}
	cmd.AddCommand(newAgentKubernetesCmd(e), newAgentHostCmd(e))
	return cmd
}

type agentKubeOptions struct {
	hub         agentHubOptions
	kubeconfig  string
	namespace   string
	platform    string
	labelOnly   bool
	memoryLimit string
	rediscover  time.Duration
}

func newAgentKubernetesCmd(e *env) *cobra.Command {
	var o agentKubeOptions
	cmd := &cobra.Command{
		Use: "kubernetes",
		Example: "  # in the cluster (deploy/agent): report Flux and Argo CD state every minute\n" +
			"  fleetform agent kubernetes --hub https://hub.example.com --cluster edge-munich-1 --token-file /var/run/fleetform/token\n" +
			"  # from a workstation, with a kubeconfig\n" +
			"  FLEETFORM_HUB_TOKEN=... fleetform agent kubernetes --hub http://127.0.0.1:8080 --cluster dev-1 --kubeconfig ~/.kube/config",
		Short: "Watch the cluster's Flux and Argo CD objects and report them to the hub",
		Long: "agent kubernetes watches the Flux GitRepository and Kustomization objects and the Argo CD\n" +
			"Application objects of the cluster (read-only: get, list, watch), maps them to deployment\n" +
			"targets (label fleetform.io/deployment-target, else the Kalypso naming convention), and\n" +
			"reports the revision the platform reconciler applied with each target's status, on every\n" +
			"change and at every heartbeat. The token comes from FLEETFORM_AGENT_TOKEN or --token-file.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return o.run(cmd.Context(), e) },
	}
	o.hub.bind(cmd)
	f := cmd.Flags()
	f.StringVar(&o.kubeconfig, "kubeconfig", "", "kubeconfig file; default: the in-cluster service account, else $KUBECONFIG or ~/.kube/config")
	f.StringVar(&o.namespace, "namespace", "", "watch only this namespace (default: all)")
	f.StringVar(&o.platform, "platform", "kustomization/flux-system/flux-system",
		"the object that syncs the cluster type's folder, as kustomization/NAMESPACE/NAME or application/NAMESPACE/NAME, when none is labelled fleetform.io/platform=true")
	f.DurationVar(&o.rediscover, "rediscover", 5*time.Minute,
		"how often to check which Flux and Argo CD resources the cluster serves: one installed, upgraded or removed since restarts the watch (0: only at start)")
	f.BoolVar(&o.labelOnly, "label-only", false, "map objects to deployment targets by the fleetform.io/deployment-target label only (no naming convention)")
	f.StringVar(&o.memoryLimit, "memory-limit", "24Mi",
		"soft memory limit of the Go runtime (GOMEMLIMIT wins when set; 0: none): the garbage collector works harder near it; raise it for clusters with many thousands of objects")
	return cmd
}

// setMemoryLimit applies --memory-limit unless GOMEMLIMIT is set.
func setMemoryLimit(limit string) error {
	q, err := resource.ParseQuantity(limit)
	if err != nil {
		return failed(ExitUsage, fmt.Errorf("--memory-limit %q: want a quantity such as 24Mi", limit))
	}
	if os.Getenv("GOMEMLIMIT") == "" && q.Value() > 0 {
		debug.SetMemoryLimit(q.Value())
	}
	return nil
}

func (o *agentKubeOptions) run(ctx context.Context, e *env) error {
	poster, err := o.hub.poster()
	if err != nil {
		return err
	}
	platform, err := kube.ParseRef(o.platform)
	if err != nil {
		return failed(ExitUsage, fmt.Errorf("--platform %w", err))
	}
	if err := setMemoryLimit(o.memoryLimit); err != nil {
		return err
	}
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = o.kubeconfig
	config, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{}).ClientConfig()
	if err != nil {
		return failed(ExitFailed, fmt.Errorf("kubernetes configuration: %w", err))
	}
	config.UserAgent = "fleetform-agent"
	client, err := dynamic.NewForConfig(config)
	if err != nil {
		return failed(ExitFailed, fmt.Errorf("kubernetes client: %w", err))
	}
	sender := agent.NewSender(poster, agent.SenderOptions{Heartbeat: o.hub.heartbeat, Logger: e.logger})
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	senderDone := make(chan struct{})
	go func() {
		defer close(senderDone)
		_ = sender.Run(ctx)
	}()
	e.logger.InfoContext(ctx, "agent started", "cluster", o.hub.cluster)
	err = kube.WatchDiscovered(ctx, client, o.namespace, o.rediscover, e.logger, sender.Forget,
		func(ctx context.Context, resources []schema.GroupVersionResource) error {
			watcher := kube.NewWatcher(client, o.hub.cluster, sender, kube.WatcherOptions{
				Resources: resources, Namespace: o.namespace, Logger: e.logger,
				Mapping: kube.Mapping{Platform: platform, LabelOnly: o.labelOnly},
			})
			e.logger.InfoContext(ctx, "watching", "resources", kube.ResourceNames(resources))
			return watcher.Run(ctx, func() { e.logger.InfoContext(ctx, "caches synced") })
		})
	cancel()
	<-senderDone
	if err != nil {
		return failed(ExitFailed, err)
	}
	return nil
}

type agentHostOptions struct {
	hub             agentHubOptions
	gitops          string
	branch          string
	path            string
	clusterType     string
	stateDir        string
	check           bool
	once            bool
	interval        time.Duration
	resync          time.Duration
	ansiblePlaybook string
}

func newAgentHostCmd(e *env) *cobra.Command {
	var o agentHostOptions
	cmd := &cobra.Command{
		Use: "host",
		Example: "  # on a VM: apply the cluster type's playbooks from the GitOps branch and report\n" +
			"  fleetform agent host --hub https://hub.example.com --cluster line-7 --gitops https://git.example.com/platform-gitops --branch prod --cluster-type vm-line\n" +
			"  # once, in check mode (nothing changed on the host)\n" +
			"  fleetform agent host --hub https://hub.example.com --cluster line-7 --gitops ./gitops --branch prod --cluster-type vm-line --check --once",
		Short: "Apply this host's Ansible playbooks from the GitOps repository and report them to the hub",
		Long: "agent host fetches the cluster type's folder of the GitOps branch, runs each deployment\n" +
			"target's namespace.yaml then reconciler.yaml with ansible-playbook (on localhost), cleans up\n" +
			"the targets that disappeared, and reports to the hub what it applied and whether it worked.\n" +
			"It repeats every --interval, or runs once with --once (for a systemd timer or cron). With\n" +
			"--check, Ansible runs in check mode: nothing changes, nothing is recorded or reported.\n" +
			"The token comes from FLEETFORM_AGENT_TOKEN or --token-file.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return o.run(cmd.Context(), e) },
	}
	o.hub.bind(cmd)
	f := cmd.Flags()
	f.StringVar(&o.gitops, "gitops", "", "GitOps repository URL or path (required)")
	f.StringVar(&o.branch, "branch", "", "the environment's branch (required)")
	f.StringVar(&o.path, "path", "", "the GitOpsRepo's folder inside the repository (default: the root)")
	f.StringVar(&o.clusterType, "cluster-type", "", "the host's cluster type (required)")
	f.StringVar(&o.stateDir, "state-dir", defaultAgentStateDir(), "where the agent keeps its clone, the copies of what it applied, and its state")
	f.BoolVar(&o.check, "check", false, "run Ansible in check mode (--check), once: change nothing, record nothing, report nothing")
	f.BoolVar(&o.once, "once", false, "apply and report once, then exit (1 when a target failed or the hub was not reached)")
	f.DurationVar(&o.interval, "interval", 5*time.Minute, "time between two runs")
	f.DurationVar(&o.resync, "resync", time.Hour, "apply a target that did not change again after this long (drift correction; 0: only what changed or failed)")
	f.StringVar(&o.ansiblePlaybook, "ansible-playbook", "ansible-playbook", "the ansible-playbook command")
	return cmd
}

// defaultAgentStateDir is /var/lib/fleetform-agent for root, else
// $XDG_STATE_HOME/fleetform-agent (~/.local/state/fleetform-agent).
func defaultAgentStateDir() string {
	if os.Geteuid() == 0 {
		return "/var/lib/fleetform-agent"
	}
	if d := os.Getenv("XDG_STATE_HOME"); d != "" {
		return filepath.Join(d, "fleetform-agent")
	}
	if home, err := os.UserHomeDir(); err == nil {
		return filepath.Join(home, ".local", "state", "fleetform-agent")
	}
	return "fleetform-agent"
}

func (o *agentHostOptions) run(ctx context.Context, e *env) error {
	if o.gitops == "" || o.branch == "" || o.clusterType == "" {
		return failed(ExitUsage, errors.New("--gitops, --branch and --cluster-type are required"))
	}
	var poster *agent.HTTPPoster
	if !o.check {
		var err error
		if poster, err = o.hub.poster(); err != nil {
			return err
		}
	}
	cluster := cmp.Or(o.hub.cluster, "check")
	creds, err := commandLineCredentials(e, o.gitops)
	if err != nil {
		return err
	}
	a, err := host.New(host.Options{
		Cluster: cluster, Repo: o.gitops, Branch: o.branch, Path: o.path, ClusterType: o.clusterType,
		StateDir: o.stateDir, Check: o.check, Resync: o.resync, AnsiblePlaybook: o.ansiblePlaybook, Logger: e.logger,
		Credentials: creds,
	})
	if err != nil {
		return failed(ExitUsage, err)
	}
	if o.once || o.check {
		return o.runOnce(ctx, e, a, poster)
	}
	return o.runLoop(ctx, e, a, poster)
}

// runOnce applies once, reports with a few retries, and exits 1 when anything failed.
func (o *agentHostOptions) runOnce(ctx context.Context, e *env, a *host.Agent, poster *agent.HTTPPoster) error {
	r, err := a.Cycle(ctx)
	if err != nil {
		return failed(ExitFailed, err)
	}
	printHostReport(e, r, o.check)
	if poster != nil {
		if err := deliverWithRetries(ctx, poster, r, 5); err != nil {
			return failed(ExitFailed, fmt.Errorf("report to the hub: %w", err))
		}
	}
	if r.Status != hub.Compliant {
		return failed(ExitFailed, nil)
	}
	return nil
}

// runLoop applies every --interval and hands each report to a Sender.
func (o *agentHostOptions) runLoop(ctx context.Context, e *env, a *host.Agent, poster *agent.HTTPPoster) error {
	sender := agent.NewSender(poster, agent.SenderOptions{Heartbeat: o.hub.heartbeat, Logger: e.logger})
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = sender.Run(ctx)
	}()
	defer func() { cancel(); <-done }()
	tick := time.NewTicker(o.interval)
	defer tick.Stop()
	for {
		r, err := a.Cycle(ctx)
		switch {
		case ctx.Err() != nil:
			return nil
		case err != nil:
			// The host still runs what it applied last: the heartbeat keeps reporting it.
			e.logger.ErrorContext(ctx, "run failed", "error", err.Error())
		default:
			printHostReport(e, r, false)
			sender.Update(r)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
	}
}

func deliverWithRetries(ctx context.Context, p agent.Poster, r hub.Report, attempts int) error {
	var err error
	for i := range attempts {
		if err = p.Report(ctx, r); err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Duration(rand.N(int64(time.Second) << i))): //nolint:gosec // retry backoff jitter; nothing secret depends on it
		}
	}
	return err
}

func printHostReport(e *env, r hub.Report, check bool) {
	mode := ""
	if check {
		mode = " (check mode: nothing changed)"
	}
	fmt.Fprintf(e.stdout, "%s at %.12s: %s%s\n", r.GitOpsPath, r.Revision, r.Status, mode)
	for _, d := range r.Deployments {
		fmt.Fprintf(e.stdout, "  %-40s %-11s %.12s\n", d.DeploymentTarget, d.Status, d.Revision)
	}
	if r.Message != "" {
		fmt.Fprintln(e.stdout, "  "+r.Message)
	}
}
