package kube

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/fleetform/fleetform/internal/hub"
)

// object loads a testdata object under another name, with labels (nil: none).
func object(t *testing.T, file, namespace, name string, labels map[string]string) *unstructured.Unstructured {
	t.Helper()
	u := load(t, file)
	u.SetNamespace(namespace)
	u.SetName(name)
	u.SetLabels(labels)
	return u
}

func target(name string) map[string]string { return map[string]string{LabelDeploymentTarget: name} }

// platformObject is the cluster's bootstrap Kustomization, syncing the aks-large folder.
func platformObject(t *testing.T, file string) *unstructured.Unstructured {
	t.Helper()
	u := object(t, file, "flux-system", "flux-system", nil)
	_ = unstructured.SetNestedField(u.Object, "./aks-large", "spec", "path")
	_ = unstructured.SetNestedField(u.Object, "flux-system", "spec", "sourceRef", "name")
	return u
}

func parseAll(objs ...*unstructured.Unstructured) []Object {
	out := make([]Object, len(objs))
	for i, u := range objs {
		out[i] = Parse(u)
	}
	return out
}

func TestBuildFromFleetformLabels(t *testing.T) {
	objs := parseAll(
		platformObject(t, "flux/kustomization-ready.yaml"),
		object(t, "flux/gitrepository-ready.yaml", "flux-system", "flux-system", nil), // the platform's source
		object(t, "flux/gitrepository-ready.yaml", "flux-system", "ledger-integration", target("ledger-integration")),
		object(t, "flux/kustomization-ready.yaml", "flux-system", "ledger-integration", target("ledger-integration")),
		object(t, "argocd/application-synced.yaml", "argocd", "checkout-api-functional-test", target("checkout-api-functional-test")),
		object(t, "argocd/application-out-of-sync.yaml", "argocd", "checkout-api-canary", target("checkout-api-canary")),
	)
	got, err := Build("aks-large-1", objs, Mapping{LabelOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	want := hub.Report{
		Cluster: "aks-large-1", Revision: shaA1, Status: hub.Progressing, GitOpsPath: "aks-large",
		Message: "checkout-api-canary: Application argocd/checkout-api-canary: sync OutOfSync, health Healthy",
		Deployments: []hub.DeploymentReport{
			{DeploymentTarget: "checkout-api-canary", Namespace: "fake-dest-ns", Status: hub.DeploymentProgress, Revision: aaaa},
			{DeploymentTarget: "checkout-api-functional-test", Namespace: "fake-dest-ns", Status: hub.Ready, Revision: aaaa},
			{DeploymentTarget: "ledger-integration", Namespace: "default", Status: hub.Ready, Revision: shaA1},
		},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("report (-want +got):\n%s", diff)
	}
}

func TestBuildStatuses(t *testing.T) {
	for _, tc := range []struct {
		name     string
		platform string
		objs     [][3]string // file, name, target label
		status   hub.ClusterStatus
		deps     map[string]hub.DeploymentStatus
		message  string
	}{
		{"all ready", "flux/kustomization-ready.yaml",
			[][3]string{{"argocd/application-synced.yaml", "a", "a"}},
			hub.Compliant, map[string]hub.DeploymentStatus{"a": hub.Ready}, ""},
		{"a failed target fails the cluster", "flux/kustomization-ready.yaml",
			[][3]string{{"argocd/application-synced.yaml", "a", "a"}, {"argocd/application-degraded.yaml", "b", "b"}},
			hub.NonCompliant, map[string]hub.DeploymentStatus{"a": hub.Ready, "b": hub.Failed}, "b: Application argocd/b: health Degraded"},
		{"a failing source fails its target", "flux/kustomization-ready.yaml",
			[][3]string{{"flux/gitrepository-fetch-failed.yaml", "a", "a"}, {"flux/kustomization-ready.yaml", "a", "a"}},
			hub.NonCompliant, map[string]hub.DeploymentStatus{"a": hub.Failed}, "couldn't find remote ref"},
		{"a source alone is progressing", "flux/kustomization-ready.yaml",
			[][3]string{{"flux/gitrepository-ready.yaml", "a", "a"}},
			hub.Progressing, map[string]hub.DeploymentStatus{"a": hub.DeploymentProgress}, "a: nothing applies GitRepository argocd/a yet"},
		{"a failing platform fails the cluster", "flux/kustomization-failed.yaml",
			[][3]string{{"argocd/application-synced.yaml", "a", "a"}},
			hub.NonCompliant, map[string]hub.DeploymentStatus{"a": hub.Ready}, "Kustomization flux-system/flux-system: The Service 'backend' is invalid"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			us := []*unstructured.Unstructured{platformObject(t, tc.platform)}
			for _, o := range tc.objs {
				us = append(us, object(t, o[0], "argocd", o[1], target(o[2])))
			}
			r, err := Build("c", parseAll(us...), Mapping{})
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]hub.DeploymentStatus{}
			for _, d := range r.Deployments {
				got[d.DeploymentTarget] = d.Status
			}
			if r.Status != tc.status || !cmp.Equal(got, tc.deps) || !strings.Contains(r.Message, tc.message) {
				t.Errorf("status %s, deployments %v, message %q; want %s, %v, containing %q", r.Status, got, r.Message, tc.status, tc.deps, tc.message)
			}
		})
	}
}

func TestBuildKalypsoNamingConvention(t *testing.T) {
	objs := parseAll(
		platformObject(t, "flux/kustomization-ready.yaml"),
		object(t, "flux/kustomization-ready.yaml", "flux-system", "dev.payments.ledger.ledger-api.ledger-integration", nil),
		object(t, "flux/kustomization-ready.yaml", "flux-system", "dev.checkout-api.checkout-api-functional-test", nil),
		object(t, "flux/kustomization-ready.yaml", "flux-system", "observability-prometheus", nil),
		object(t, "flux/kustomization-ready.yaml", "flux-system", "two.parts", nil),
		object(t, "flux/kustomization-ready.yaml", "flux-system", "dev.x.y.z.labelled-name", target("from-label")),
	)
	r, err := Build("c", objs, Mapping{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, d := range r.Deployments {
		names = append(names, d.DeploymentTarget)
	}
	want := []string{"checkout-api-functional-test", "from-label", "ledger-integration", "observability-prometheus"}
	if !cmp.Equal(names, want) {
		t.Errorf("targets %v, want %v", names, want)
	}

	r, err = Build("c", objs, Mapping{LabelOnly: true})
	if err != nil || len(r.Deployments) != 1 || r.Deployments[0].DeploymentTarget != "from-label" {
		t.Errorf("LabelOnly: %v %+v, want only the labelled target", err, r.Deployments)
	}
}

func TestBuildPlatformReconciler(t *testing.T) {
	app := object(t, "argocd/application-synced.yaml", "argocd", "platform", nil)
	_ = unstructured.SetNestedField(app.Object, "aks-small/", "spec", "source", "path")

	// By flag.
	r, err := Build("c", parseAll(app), Mapping{Platform: Ref{KindApplication, "argocd", "platform"}})
	if err != nil || r.Revision != aaaa || r.GitOpsPath != "aks-small" || len(r.Deployments) != 0 {
		t.Errorf("by reference: %v %+v", err, r)
	}
	// By label, wherever it is.
	app.SetLabels(map[string]string{LabelPlatform: "true"})
	if r, err = Build("c", parseAll(app), Mapping{}); err != nil || r.Revision != aaaa {
		t.Errorf("by label: %v %+v", err, r)
	}
	// Missing.
	if _, err = Build("c", nil, Mapping{}); err == nil || !strings.Contains(err.Error(), "Kustomization flux-system/flux-system") {
		t.Errorf("no platform: %v, want an error naming the default", err)
	}
	// Never applied: the attempted revision, then the source's, else nothing to report.
	p := platformObject(t, "flux/kustomization-reconciling.yaml")
	if _, err = Build("c", parseAll(p), Mapping{}); err == nil {
		t.Error("platform without any revision: no error")
	}
	src := object(t, "flux/gitrepository-ready.yaml", "flux-system", "flux-system", nil)
	if r, err = Build("c", parseAll(p, src), Mapping{}); err != nil || r.Revision != "132f4e719209eb10b9485302f8593fc0e680f4fc" || r.Status != hub.Progressing {
		t.Errorf("platform never applied: %v %+v, want the source's revision, Progressing", err, r)
	}
}

func TestParseRef(t *testing.T) {
	if r, err := ParseRef("Kustomization/flux-system/platform"); err != nil || r != (Ref{KindKustomization, "flux-system", "platform"}) {
		t.Errorf("got %v %v", r, err)
	}
	if r, err := ParseRef("application/argocd/platform"); err != nil || r != (Ref{KindApplication, "argocd", "platform"}) {
		t.Errorf("got %v %v", r, err)
	}
	for _, bad := range []string{"", "flux-system/platform", "gitrepository/a/b", "application//x"} {
		if _, err := ParseRef(bad); err == nil {
			t.Errorf("ParseRef(%q): no error", bad)
		}
	}
}
