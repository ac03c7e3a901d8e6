package kube

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	k8stesting "k8s.io/client-go/testing"
)

// installable is a fake cluster whose resources are served only once installed.
type installable struct {
	client    *dynamicfake.FakeDynamicClient
	installed map[schema.GroupVersionResource]*atomic.Bool
}

func newInstallable(served ...schema.GroupVersionResource) *installable {
	c := &installable{client: newFakeClient(), installed: map[schema.GroupVersionResource]*atomic.Bool{}}
	for _, candidates := range [][]schema.GroupVersionResource{GitRepositories, Kustomizations, Applications} {
		for _, gvr := range candidates {
			c.installed[gvr] = &atomic.Bool{}
		}
	}
	for _, gvr := range served {
		c.installed[gvr].Store(true)
	}
	c.client.PrependReactor("list", "*", func(action k8stesting.Action) (bool, runtime.Object, error) {
		gvr := action.GetResource()
		if ok := c.installed[gvr]; ok != nil && !ok.Load() {
			return true, nil, apierrors.NewNotFound(gvr.GroupResource(), "")
		}
		return false, nil, nil
	})
	return c
}

// watchCalls runs WatchDiscovered and hands the test every resource set it watches.
func watchCalls(t *testing.T, c *installable) (<-chan string, <-chan error) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	t.Cleanup(cancel)
	calls, result := make(chan string, 16), make(chan error, 1)
	go func() {
		result <- WatchDiscovered(ctx, c.client, "", 5*time.Millisecond, slog.New(slog.DiscardHandler), func() { calls <- "idle" },
			func(ctx context.Context, resources []schema.GroupVersionResource) error {
				calls <- fmt.Sprint(resources)
				<-ctx.Done()
				return nil
			})
	}()
	return calls, result
}

func next(t *testing.T, calls <-chan string) string {
	t.Helper()
	select {
	case got := <-calls:
		return got
	case <-time.After(10 * time.Second):
		t.Fatal("no watch started")
		return ""
	}
}

func TestWatchDiscoveredRestartsWhenAReconcilerIsInstalled(t *testing.T) {
	c := newInstallable(gitRepositories, kustomizations)
	calls, result := watchCalls(t, c)
	if got, want := next(t, calls), fmt.Sprint([]schema.GroupVersionResource{gitRepositories, kustomizations}); got != want {
		t.Fatalf("first watch on %s, want %s", got, want)
	}
	c.installed[applications].Store(true) // Argo CD installed after the agent started
	want := fmt.Sprint([]schema.GroupVersionResource{gitRepositories, kustomizations, applications})
	if got := next(t, calls); got != want {
		t.Fatalf("after Argo CD was installed, watch on %s, want %s", got, want)
	}
	c.installed[applications].Store(false)
	if got, want := next(t, calls), fmt.Sprint([]schema.GroupVersionResource{gitRepositories, kustomizations}); got != want {
		t.Fatalf("after Argo CD was removed, watch on %s, want %s", got, want)
	}
	select {
	case extra := <-calls:
		t.Fatalf("watch restarted on %s with nothing changed", extra)
	case <-time.After(50 * time.Millisecond):
	}
	c.installed[gitRepositories].Store(false) // Flux removed too: nothing to watch, what was reported no longer holds
	c.installed[kustomizations].Store(false)
	// A discovery that ran while the two were removed may have seen only one of them gone:
	// it watches what it saw, and the next one finds nothing.
	halfway := map[string]bool{
		fmt.Sprint([]schema.GroupVersionResource{gitRepositories}): true,
		fmt.Sprint([]schema.GroupVersionResource{kustomizations}):  true,
	}
	got := next(t, calls)
	if halfway[got] {
		got = next(t, calls)
	}
	if got != "idle" {
		t.Fatalf("after everything was removed: %s, want idle", got)
	}
	select {
	case err := <-result:
		t.Fatalf("WatchDiscovered returned %v while running", err)
	default:
	}
}

func TestWatchDiscoveredWaitsForAReconciler(t *testing.T) {
	c := newInstallable()
	calls, _ := watchCalls(t, c)
	if got := next(t, calls); got != "idle" {
		t.Fatalf("nothing installed: %s, want idle", got)
	}
	select {
	case got := <-calls:
		t.Fatalf("watch started on %s with nothing installed", got)
	case <-time.After(50 * time.Millisecond):
	}
	c.installed[Kustomizations[1]].Store(true) // an older Flux
	if got, want := next(t, calls), fmt.Sprint([]schema.GroupVersionResource{Kustomizations[1]}); got != want {
		t.Fatalf("watch on %s, want %s", got, want)
	}
}

func TestWatchDiscoveredEnds(t *testing.T) {
	c := newInstallable(applications)
	ctx, cancel := context.WithCancel(t.Context())
	stopped := make(chan struct{})
	result := make(chan error, 1)
	go func() {
		result <- WatchDiscovered(ctx, c.client, "", time.Hour, slog.New(slog.DiscardHandler), nil,
			func(ctx context.Context, _ []schema.GroupVersionResource) error {
				<-ctx.Done()
				close(stopped)
				return nil
			})
	}()
	cancel()
	if err := <-result; err != nil {
		t.Fatalf("after ctx ended: %v, want nil", err)
	}
	select {
	case <-stopped:
	default:
		t.Fatal("WatchDiscovered returned before its watch stopped")
	}

	broken := errors.New("the cache did not sync")
	err := WatchDiscovered(t.Context(), c.client, "", time.Hour, slog.New(slog.DiscardHandler), nil,
		func(context.Context, []schema.GroupVersionResource) error { return broken })
	if !errors.Is(err, broken) {
		t.Fatalf("a failing watch: %v, want its error", err)
	}
	none := newInstallable()
	if err := WatchDiscovered(t.Context(), none.client, "", 0, slog.New(slog.DiscardHandler), nil,
		func(context.Context, []schema.GroupVersionResource) error { return nil }); !errors.Is(err, ErrNoReconciler) {
		t.Fatalf("nothing installed and no rediscovery: %v, want ErrNoReconciler", err)
	}
}
