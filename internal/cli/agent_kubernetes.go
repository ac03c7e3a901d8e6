package cli

import (
	"context"
	"os"
	"runtime/debug"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/fleetform/fleetform/internal/agent/kube"
	"github.com/fleetform/fleetform/internal/cli/command"
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
		return command.Usagef("--memory-limit %q: want a quantity such as 24Mi", limit)
	}
	if os.Getenv("GOMEMLIMIT") == "" && q.Value() > 0 {
		debug.SetMemoryLimit(q.Value())
	}
	return nil
}

func (o *agentKubeOptions) run(ctx context.Context, e *env) error {
	tokenFile, token, err := o.hub.token()
	if err != nil {
		return err
	}
	platform, err := kube.ParseRef(o.platform)
	if err != nil {
		return command.Usagef("--platform %w", err)
	}
	if err := setMemoryLimit(o.memoryLimit); err != nil {
		return err
	}
	return kube.Run(ctx, kube.RunOptions{HubURL: o.hub.hub, Cluster: o.hub.cluster, TokenFile: tokenFile, Token: token,
		Heartbeat: o.hub.heartbeat, Kubeconfig: o.kubeconfig, Namespace: o.namespace,
		Mapping: kube.Mapping{Platform: platform, LabelOnly: o.labelOnly}, Rediscover: o.rediscover, Logger: e.Logger})
}
