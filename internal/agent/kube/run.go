package kube

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/fleetform/fleetform/internal/agent"
)

// RunOptions say how the Kubernetes agent runs.
type RunOptions struct {
	// HubURL is where the reports go, Cluster the name the cluster is registered under, with
	// the token from TokenFile (read before every report), else Token; Heartbeat is how long
	// the agent waits without a change before it sends the state again.
	HubURL, Cluster, TokenFile, Token string
	Heartbeat                         time.Duration
	// Kubeconfig is the kubeconfig file ("": the in-cluster service account, else
	// $KUBECONFIG or ~/.kube/config).
	Kubeconfig string
	// Namespace, when set, is the only namespace watched.
	Namespace string
	// Mapping maps the objects to deployment targets.
	Mapping Mapping
	// Rediscover is how often the resources the cluster serves are listed again (0: only at
	// the start).
	Rediscover time.Duration
	Logger     *slog.Logger
}

// Run watches the cluster's Flux and Argo CD objects and reports them until ctx ends.
func Run(ctx context.Context, o RunOptions) error {
	poster, err := agent.Hub{URL: o.HubURL, Cluster: o.Cluster, TokenFile: o.TokenFile, Token: o.Token}.Poster()
	if err != nil {
		return err
	}
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = o.Kubeconfig
	config, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{}).ClientConfig()
	if err != nil {
		return fmt.Errorf("kubernetes configuration: %w", err)
	}
	config.UserAgent = "fleetform-agent"
	client, err := dynamic.NewForConfig(config)
	if err != nil {
		return fmt.Errorf("kubernetes client: %w", err)
	}
	sender, stop := agent.Sending(ctx, poster, agent.SenderOptions{Heartbeat: o.Heartbeat, Logger: o.Logger})
	defer stop()
	o.Logger.InfoContext(ctx, "agent started", "cluster", o.Cluster)
	return WatchDiscovered(ctx, client, o.Namespace, o.Rediscover, o.Logger, sender.Forget,
		func(ctx context.Context, resources []schema.GroupVersionResource) error {
			watcher := NewWatcher(client, o.Cluster, sender, WatcherOptions{
				Resources: resources, Namespace: o.Namespace, Logger: o.Logger, Mapping: o.Mapping})
			o.Logger.InfoContext(ctx, "watching", "resources", ResourceNames(resources))
			return watcher.Run(ctx, func() { o.Logger.InfoContext(ctx, "caches synced") })
		})
}
