package kube

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/cache"

	"github.com/fleetform/fleetform/internal/hub"
)

// Resources the agent watches, newest version first: Discover picks the first one the
// cluster serves.
var (
	GitRepositories = []schema.GroupVersionResource{
		{Group: "source.toolkit.fluxcd.io", Version: "v1", Resource: "gitrepositories"},
		{Group: "source.toolkit.fluxcd.io", Version: "v1beta2", Resource: "gitrepositories"},
	}
	Kustomizations = []schema.GroupVersionResource{
		{Group: "kustomize.toolkit.fluxcd.io", Version: "v1", Resource: "kustomizations"},
		{Group: "kustomize.toolkit.fluxcd.io", Version: "v1beta2", Resource: "kustomizations"},
	}
	Applications = []schema.GroupVersionResource{
		{Group: "argoproj.io", Version: "v1alpha1", Resource: "applications"},
	}
)

// Discover returns, for each of GitRepositories, Kustomizations and Applications, the first
// version the cluster serves; kinds whose CRD is not installed are left out. It asks by
// listing one object of each candidate (the agent may list them anyway, and needs no
// other permission), in namespace ("" for all). With none of them served it returns
// ErrNoReconciler. WatchDiscovered discovers again while the agent runs.
func Discover(ctx context.Context, client dynamic.Interface, namespace string) ([]schema.GroupVersionResource, error) {
	var out []schema.GroupVersionResource
	for _, candidates := range [][]schema.GroupVersionResource{GitRepositories, Kustomizations, Applications} {
		for _, gvr := range candidates {
			_, err := client.Resource(gvr).Namespace(namespace).List(ctx, metav1.ListOptions{Limit: 1})
			if apierrors.IsNotFound(err) {
				continue
			}
			if err != nil {
				return nil, fmt.Errorf("discover %s: %w", gvr.GroupResource(), err)
			}
			out = append(out, gvr)
			break
		}
	}
	if len(out) == 0 {
		return nil, ErrNoReconciler
	}
	return out, nil
}

// ErrNoReconciler means that the cluster serves none of the resources the agent watches.
var ErrNoReconciler = errors.New("neither Flux nor Argo CD is installed: no gitrepositories, kustomizations or applications resource")

// WatchDiscovered runs watch on the resources Discover finds, and discovers again every
// interval (0: never): when the set changed (Flux or Argo CD installed, upgraded to a new
// version or removed after the agent started), it stops watch and runs it again on the new
// set. While the cluster serves none of them it waits, after calling idle (when not nil:
// what was reported no longer holds). It returns when ctx ends (nil), when
// watch fails, or when the first discovery fails for another reason than ErrNoReconciler
// (RBAC, for example); later discovery errors are logged and the watch goes on.
func WatchDiscovered(ctx context.Context, client dynamic.Interface, namespace string, interval time.Duration,
	logger *slog.Logger, idle func(), watch func(context.Context, []schema.GroupVersionResource) error) error {
	current, err := Discover(ctx, client, namespace)
	if err != nil && (!errors.Is(err, ErrNoReconciler) || interval <= 0) {
		return err
	}
	var ticks <-chan time.Time
	if interval > 0 {
		ticker := time.NewTicker(interval)
		defer ticker.Stop()
		ticks = ticker.C
	}
	for {
		if len(current) == 0 {
			logger.WarnContext(ctx, "waiting for Flux or Argo CD", "reason", ErrNoReconciler.Error(), "every", interval.String())
			if idle != nil {
				idle()
			}
		}
		runCtx, stop := context.WithCancel(ctx)
		done := make(chan error, 1)
		if len(current) > 0 {
			go func() { done <- watch(runCtx, current) }()
		}
		next, changed, watchErr := awaitChange(ctx, client, namespace, current, ticks, done, logger)
		stop()
		if !changed {
			return watchErr
		}
		if len(current) > 0 {
			// The old watch has stopped before the new one starts.
			if err := <-done; err != nil {
				logger.WarnContext(ctx, "the previous watch ended with an error", "error", err.Error())
			}
		}
		logger.InfoContext(ctx, "the served reconciler resources changed", "watching", ResourceNames(next))
		current = next
	}
}

// awaitChange discovers at every tick until the served resources differ from current
// (changed), the watch ends (its error) or ctx ends (nil; the watch ends too).
func awaitChange(ctx context.Context, client dynamic.Interface, namespace string, current []schema.GroupVersionResource,
	ticks <-chan time.Time, done <-chan error, logger *slog.Logger) (next []schema.GroupVersionResource, changed bool, err error) {
	for {
		select {
		case <-ctx.Done():
			if len(current) > 0 {
				return nil, false, <-done
			}
			return nil, false, nil
		case err := <-done:
			return nil, false, err
		case <-ticks:
			next, err := Discover(ctx, client, namespace)
			switch {
			case err != nil && !errors.Is(err, ErrNoReconciler):
				if ctx.Err() == nil {
					logger.WarnContext(ctx, "discovering the reconciler resources again", "error", err.Error())
				}
			case !slices.Equal(next, current):
				return next, true, nil
			}
		}
	}
}

// ResourceNames names resources as resource.group/version, for logs.
func ResourceNames(resources []schema.GroupVersionResource) string {
	names := make([]string, len(resources))
	for i, r := range resources {
		names[i] = r.Resource + "." + r.Group + "/" + r.Version
	}
	return strings.Join(names, ",")
}

// Updater receives the cluster's state (agent.Sender implements it).
type Updater interface {
	Update(r hub.Report) bool
}

// WatcherOptions configure a Watcher.
type WatcherOptions struct {
	// Resources to watch (default: the first version of each kind, as Discover would
	// return on a cluster with Flux and Argo CD).
	Resources []schema.GroupVersionResource
	// Namespace restricts the watch to one namespace ("" watches all).
	Namespace string
	Mapping   Mapping
	// Now stamps the reports (default time.Now).
	Now func() time.Time
	// Logger receives why nothing can be reported yet (default: discard).
	Logger *slog.Logger
}

// Watcher watches the reconciler objects of a cluster with dynamic informers (no polling)
// and hands the cluster's report to an Updater after the caches synced and after every
// change (changes that arrive together are coalesced into one report).
type Watcher struct {
	client  dynamic.Interface
	cluster string
	out     Updater
	opts    WatcherOptions
	changed chan struct{}
}

// NewWatcher returns a Watcher of cluster's objects through client.
func NewWatcher(client dynamic.Interface, cluster string, out Updater, opts WatcherOptions) *Watcher {
	if len(opts.Resources) == 0 {
		opts.Resources = []schema.GroupVersionResource{GitRepositories[0], Kustomizations[0], Applications[0]}
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	return &Watcher{client: client, cluster: cluster, out: out, opts: opts, changed: make(chan struct{}, 1)}
}

// Run watches until ctx ends; it returns nil then, or an error when the caches cannot sync.
// onSynced, when not nil, is called once the caches synced and the first report was handed
// over.
func (w *Watcher) Run(ctx context.Context, onSynced func()) error {
	informers := make([]cache.SharedIndexInformer, 0, len(w.opts.Resources))
	notify := func(any) {
		select {
		case w.changed <- struct{}{}:
		default:
		}
	}
	for _, gvr := range w.opts.Resources {
		inf := newInformer(w.client, gvr, w.opts.Namespace)
		if err := inf.SetTransform(compact); err != nil {
			return fmt.Errorf("watch %s: %w", gvr.Resource, err)
		}
		if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
			AddFunc:    notify,
			UpdateFunc: func(_, obj any) { notify(obj) },
			DeleteFunc: notify,
		}); err != nil {
			return fmt.Errorf("watch %s: %w", gvr.Resource, err)
		}
		informers = append(informers, inf)
	}
	ctx, cancel := context.WithCancel(ctx)
	var running sync.WaitGroup
	defer func() { cancel(); running.Wait() }()
	// One informer after the other: their initial lists are decoded in turn, not together,
	// which keeps the agent's peak memory at the largest list's.
	for i, inf := range informers {
		running.Go(func() { inf.RunWithContext(ctx) })
		if !cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("watch %s: the cache did not sync", w.opts.Resources[i].Resource)
		}
	}
	lastProblem := ""
	publish := func() {
		lastProblem = w.publish(ctx, informers, lastProblem)
	}
	publish()
	if onSynced != nil {
		onSynced()
	}
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-w.changed:
			publish()
		}
	}
}

// publish builds the report from the caches and hands it over; it returns why it could not
// (logged once per distinct reason).
func (w *Watcher) publish(ctx context.Context, informers []cache.SharedIndexInformer, lastProblem string) string {
	var objs []Object
	for _, inf := range informers {
		for _, item := range inf.GetStore().List() {
			if u, ok := item.(*unstructured.Unstructured); ok {
				objs = append(objs, Parse(u))
			}
		}
	}
	r, err := Build(w.cluster, objs, w.opts.Mapping)
	if err != nil {
		if err.Error() != lastProblem {
			w.opts.Logger.WarnContext(ctx, "nothing to report yet", "reason", err.Error(), "objects", len(objs))
		}
		return err.Error()
	}
	r.ObservedAt = w.opts.Now()
	w.out.Update(r)
	return ""
}

// newInformer returns the informer dynamicinformer.NewFilteredDynamicInformer builds (list
// and watch through the dynamic client, watch-list when the server supports it, no
// resync), without linking k8s.io/client-go/informers: that package brings every typed
// Kubernetes API, several times the memory of the rest of the agent.
func newInformer(client dynamic.Interface, gvr schema.GroupVersionResource, namespace string) cache.SharedIndexInformer {
	resource := client.Resource(gvr).Namespace(namespace)
	lw := &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, options metav1.ListOptions) (runtime.Object, error) {
			return resource.List(ctx, options)
		},
		WatchFuncWithContext: func(ctx context.Context, options metav1.ListOptions) (watch.Interface, error) {
			return resource.Watch(ctx, options)
		},
	}
	return cache.NewSharedIndexInformerWithOptions(cache.ToListWatcherWithWatchListSemantics(lw, client),
		&unstructured.Unstructured{}, cache.SharedIndexInformerOptions{ObjectDescription: gvr.String()})
}
