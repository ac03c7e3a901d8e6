package kube

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/fleetform/fleetform/internal/hub"
)

var (
	gitRepositories = GitRepositories[0]
	kustomizations  = Kustomizations[0]
	applications    = Applications[0]
)

// recorder is an Updater that hands every report to the test.
type recorder struct{ reports chan hub.Report }

func (r *recorder) Update(rep hub.Report) bool { r.reports <- rep; return true }

// waitFor returns the first report that satisfies ok; reports that do not are states the
// watcher went through.
func (r *recorder) waitFor(t *testing.T, what string, ok func(hub.Report) bool) hub.Report {
	t.Helper()
	timeout := time.After(20 * time.Second)
	for {
		select {
		case rep := <-r.reports:
			if ok(rep) {
				return rep
			}
		case <-timeout:
			t.Fatalf("no report with %s", what)
		}
	}
}

func newFakeClient(objs ...runtime.Object) *dynamicfake.FakeDynamicClient {
	return dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{
		gitRepositories: "GitRepositoryList", kustomizations: "KustomizationList", applications: "ApplicationList",
		GitRepositories[1]: "GitRepositoryList", Kustomizations[1]: "KustomizationList",
	}, objs...)
}

// startWatcher runs a Watcher on client until the test ends and returns once the caches
// synced and the three watches are open.
func startWatcher(t *testing.T, client *dynamicfake.FakeDynamicClient, opts WatcherOptions) *recorder {
	t.Helper()
	var watches atomic.Int32
	client.PrependWatchReactor("*", func(k8stesting.Action) (bool, watch.Interface, error) {
		watches.Add(1)
		return false, nil, nil // the default reactor serves it
	})
	rec := &recorder{reports: make(chan hub.Report, 1000)}
	ctx, cancel := context.WithCancel(t.Context())
	synced, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		if err := NewWatcher(client, "aks-large-1", rec, opts).Run(ctx, func() { close(synced) }); err != nil {
			t.Errorf("Run: %v", err)
		}
	}()
	t.Cleanup(func() { cancel(); <-done })
	select {
	case <-synced:
	case <-time.After(20 * time.Second):
		t.Fatal("the caches did not sync")
	}
	for watches.Load() < 3 {
		time.Sleep(time.Millisecond) // wait for the watches to open before changing objects
	}
	return rec
}

func entry(r hub.Report, target string) (hub.DeploymentReport, bool) {
	for _, d := range r.Deployments {
		if d.DeploymentTarget == target {
			return d, true
		}
	}
	return hub.DeploymentReport{}, false
}

func TestWatcherReportsAddUpdateDelete(t *testing.T) {
	client := newFakeClient(
		platformObject(t, "flux/kustomization-ready.yaml"),
		object(t, "flux/gitrepository-ready.yaml", "flux-system", "ledger-integration", target("ledger-integration")),
		object(t, "flux/kustomization-ready.yaml", "flux-system", "ledger-integration", target("ledger-integration")),
	)
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	rec := startWatcher(t, client, WatcherOptions{Now: func() time.Time { return now }})
	ctx := t.Context()

	first := rec.waitFor(t, "the initial state", func(hub.Report) bool { return true })
	if first.Revision != shaA1 || first.Status != hub.Compliant || first.GitOpsPath != "aks-large" || !first.ObservedAt.Equal(now) {
		t.Fatalf("initial report %+v", first)
	}
	if d, ok := entry(first, "ledger-integration"); !ok || d.Status != hub.Ready || d.Namespace != "default" {
		t.Fatalf("initial ledger-integration %+v (found %v)", d, ok)
	}

	// Add: an Argo CD Application appears, still out of sync.
	app := object(t, "argocd/application-out-of-sync.yaml", "argocd", "checkout-api-functional-test", target("checkout-api-functional-test"))
	if _, err := client.Resource(applications).Namespace("argocd").Create(ctx, app, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	added := rec.waitFor(t, "the new application", func(r hub.Report) bool { _, ok := entry(r, "checkout-api-functional-test"); return ok })
	if d, _ := entry(added, "checkout-api-functional-test"); d.Status != hub.DeploymentProgress || added.Status != hub.Progressing {
		t.Fatalf("added application %+v in cluster %s, want Progressing", d, added.Status)
	}

	// Update status: its sync fails.
	failed := object(t, "argocd/application-sync-failed.yaml", "argocd", "checkout-api-functional-test", target("checkout-api-functional-test"))
	if _, err := client.Resource(applications).Namespace("argocd").Update(ctx, failed, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	rep := rec.waitFor(t, "the failed sync", func(r hub.Report) bool { return r.Status == hub.NonCompliant })
	if d, _ := entry(rep, "checkout-api-functional-test"); d.Status != hub.Failed || d.Revision != bbbb {
		t.Fatalf("failed application %+v, want Failed at bbbb…", d)
	}

	// Update status: the platform applies a new revision.
	p := platformObject(t, "flux/kustomization-ready.yaml")
	_ = unstructured.SetNestedField(p.Object, "main@sha1:7c500d302e38e7e4a3f327343a8a5c21acaaeb87", "status", "lastAppliedRevision")
	if _, err := client.Resource(kustomizations).Namespace("flux-system").Update(ctx, p, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	rec.waitFor(t, "the new platform revision", func(r hub.Report) bool { return r.Revision == "7c500d302e38e7e4a3f327343a8a5c21acaaeb87" })

	// Delete: the ledger's objects go; so does its deployment entry.
	for _, gvr := range []schema.GroupVersionResource{kustomizations, gitRepositories} {
		if err := client.Resource(gvr).Namespace("flux-system").Delete(ctx, "ledger-integration", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	gone := rec.waitFor(t, "no ledger-integration", func(r hub.Report) bool { _, ok := entry(r, "ledger-integration"); return !ok })
	if len(gone.Deployments) != 1 || gone.Deployments[0].DeploymentTarget != "checkout-api-functional-test" {
		t.Fatalf("after the delete: %+v", gone.Deployments)
	}
}

func TestWatcherWithoutPlatformReportsNothing(t *testing.T) {
	client := newFakeClient(object(t, "argocd/application-synced.yaml", "argocd", "a", target("a")))
	rec := startWatcher(t, client, WatcherOptions{})
	// The platform reconciler appears: now there is something to report.
	p := object(t, "argocd/application-synced.yaml", "argocd", "platform", map[string]string{LabelPlatform: "true"})
	if _, err := client.Resource(applications).Namespace("argocd").Create(t.Context(), p, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	first := rec.waitFor(t, "any report", func(hub.Report) bool { return true })
	if first.Revision != aaaa || len(first.Deployments) != 1 {
		t.Fatalf("first report %+v: want it only once the platform reconciler exists", first)
	}
}

func TestDiscover(t *testing.T) {
	client := newFakeClient()
	// A cluster with Flux's GitRepository v1, Kustomization v1beta2 only, and no Argo CD.
	notFound := func(action k8stesting.Action) (bool, runtime.Object, error) {
		gvr := action.GetResource()
		if gvr == applications || gvr == kustomizations {
			return true, nil, apierrors.NewNotFound(gvr.GroupResource(), "")
		}
		return false, nil, nil
	}
	client.PrependReactor("list", "*", notFound)
	got, err := Discover(t.Context(), client, "")
	if err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprint([]schema.GroupVersionResource{gitRepositories, Kustomizations[1]}); fmt.Sprint(got) != want {
		t.Errorf("Discover = %v, want %v", got, want)
	}

	none := newFakeClient()
	none.PrependReactor("list", "*", func(action k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewNotFound(action.GetResource().GroupResource(), "")
	})
	if _, err := Discover(t.Context(), none, ""); err == nil {
		t.Error("no Flux, no Argo CD: no error")
	}
	forbidden := newFakeClient()
	forbidden.PrependReactor("list", "*", func(action k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewForbidden(action.GetResource().GroupResource(), "", errors.New("RBAC"))
	})
	if _, err := Discover(t.Context(), forbidden, "flux-system"); err == nil || !apierrors.IsForbidden(err) {
		t.Errorf("forbidden: %v, want the API's error", err)
	}
}
