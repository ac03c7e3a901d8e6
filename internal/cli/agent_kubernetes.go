package cli

import (
	"context"
	"fmt"
	"os"
	"runtime/debug"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/fleetform/fleetform/internal/agent"
	"github.com/fleetform/fleetform/internal/agent/kube"
)

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
	sender := agent.NewSender(poster, agent.SenderOptions{Heartbeat: o.hub.heartbeat, Logger: e.Logger})
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	senderDone := make(chan struct{})
	go func() {
		defer close(senderDone)
		_ = sender.Run(ctx)
	}()
	e.Logger.InfoContext(ctx, "agent started", "cluster", o.hub.cluster)
	err = kube.WatchDiscovered(ctx, client, o.namespace, o.rediscover, e.Logger, sender.Forget,
		func(ctx context.Context, resources []schema.GroupVersionResource) error {
			watcher := kube.NewWatcher(client, o.hub.cluster, sender, kube.WatcherOptions{
				Resources: resources, Namespace: o.namespace, Logger: e.Logger,
				Mapping: kube.Mapping{Platform: platform, LabelOnly: o.labelOnly},
			})
			e.Logger.InfoContext(ctx, "watching", "resources", kube.ResourceNames(resources))
			return watcher.Run(ctx, func() { e.Logger.InfoContext(ctx, "caches synced") })
		})
	cancel()
	<-senderDone
	if err != nil {
		return failed(ExitFailed, err)
	}
	return nil
}
