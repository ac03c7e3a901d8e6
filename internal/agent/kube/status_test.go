package kube

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/fleetform/fleetform/internal/hub"
)

// load reads a testdata object as the API server would send it.
func load(tb testing.TB, name string) *unstructured.Unstructured {
	tb.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		tb.Fatal(err)
	}
	js, err := yaml.YAMLToJSON(data)
	if err != nil {
		tb.Fatalf("%s: %v", name, err)
	}
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(js); err != nil { // numbers become int64, as from the API server
		tb.Fatalf("%s: %v", name, err)
	}
	return u
}

const (
	shaA1 = "a1afe267b54f38b46b487f6e938a6fd508278c07"
	aaaa  = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	bbbb  = "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
)

func TestParseRealStatusObjects(t *testing.T) {
	for _, tc := range []struct {
		file      string
		status    hub.DeploymentStatus
		revision  string
		attempted string
		message   string // a part of the message
	}{
		{"flux/kustomization-ready.yaml", hub.Ready, shaA1, shaA1, "Applied revision: main@sha1:" + shaA1},
		{"flux/kustomization-reconciling.yaml", hub.DeploymentProgress, "", "", "Detecting drift"},
		{"flux/kustomization-failed.yaml", hub.Failed, shaA1, "7c500d302e38e7e4a3f327343a8a5c21acaaeb87", "Unsupported value: 'Ingress'"},
		{"flux/kustomization-failed-retrying.yaml", hub.Failed, "67e2c98a60dc92283531412a9e604dd4bae005a9",
			"67e2c98a60dc92283531412a9e604dd4bae005a9", "kustomization path not found"},
		{"flux/gitrepository-ready.yaml", hub.Ready, "132f4e719209eb10b9485302f8593fc0e680f4fc", "", "stored artifact"},
		{"flux/gitrepository-fetch-failed.yaml", hub.Failed, "", "", `couldn't find remote ref "refs/heads/invalid"`},
		{"argocd/application-synced.yaml", hub.Ready, aaaa, "", ""},
		{"argocd/application-out-of-sync.yaml", hub.DeploymentProgress, aaaa, "", "sync OutOfSync, health Healthy"},
		{"argocd/application-sync-failed.yaml", hub.Failed, bbbb, "", "sync Failed"},
		{"argocd/application-degraded.yaml", hub.Failed, aaaa, "", "health Degraded"},
		{"argocd/application-sync-running.yaml", hub.DeploymentProgress, aaaa, "", "sync Running"},
	} {
		t.Run(tc.file, func(t *testing.T) {
			o := Parse(load(t, tc.file))
			if o.Status != tc.status || o.Revision != tc.revision || o.Attempted != tc.attempted {
				t.Errorf("status %s, revision %q, attempted %q; want %s, %q, %q", o.Status, o.Revision, o.Attempted, tc.status, tc.revision, tc.attempted)
			}
			if !strings.Contains(o.Message, tc.message) {
				t.Errorf("message %q does not contain %q", o.Message, tc.message)
			}
		})
	}
}

func TestParseSpecFields(t *testing.T) {
	k := Parse(load(t, "flux/kustomization-ready.yaml"))
	if k.Path != "./kustomize" || k.DestinationNamespace != "default" || k.Source != "default/podinfo" {
		t.Errorf("Kustomization: path %q, namespace %q, source %q", k.Path, k.DestinationNamespace, k.Source)
	}
	a := Parse(load(t, "argocd/application-synced.yaml"))
	if a.Path != "some/path" || a.DestinationNamespace != "fake-dest-ns" || a.Ref() != "Application fake-argocd-ns/my-app" {
		t.Errorf("Application: path %q, namespace %q, ref %q", a.Path, a.DestinationNamespace, a.Ref())
	}
}

func TestParseConditionsBeyondTheTestdata(t *testing.T) {
	// Stalled (kstatus) wins over everything.
	u := load(t, "flux/kustomization-ready.yaml")
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	conds = append(conds, map[string]any{"type": "Stalled", "status": "True", "reason": "InvalidPath", "message": "path ./x not found"})
	_ = unstructured.SetNestedSlice(u.Object, conds, "status", "conditions")
	if o := Parse(u); o.Status != hub.Failed || o.Message != "path ./x not found" {
		t.Errorf("Stalled: %s %q, want Failed", o.Status, o.Message)
	}

	// A spec change the controller has not observed yet is progressing, even if Ready.
	u = load(t, "flux/gitrepository-ready.yaml")
	u.SetGeneration(2)
	if o := Parse(u); o.Status != hub.DeploymentProgress {
		t.Errorf("generation 2 observed 1: %s, want Progressing", o.Status)
	}

	// Ready=False while a new attempt runs (reason Progressing) is progressing.
	u = load(t, "flux/kustomization-failed-retrying.yaml")
	conds, _, _ = unstructured.NestedSlice(u.Object, "status", "conditions")
	conds[0].(map[string]any)["reason"] = "Progressing"
	_ = unstructured.SetNestedSlice(u.Object, conds, "status", "conditions")
	if o := Parse(u); o.Status != hub.DeploymentProgress {
		t.Errorf("retry in progress: %s, want Progressing", o.Status)
	}

	// An Argo CD error condition fails a Synced and Healthy Application.
	u = load(t, "argocd/application-synced.yaml")
	_ = unstructured.SetNestedSlice(u.Object, []any{map[string]any{"type": "ComparisonError", "message": "rpc error"}}, "status", "conditions")
	if o := Parse(u); o.Status != hub.Failed || o.Message != "ComparisonError: rpc error" {
		t.Errorf("ComparisonError: %s %q, want Failed", o.Status, o.Message)
	}

	// Multi-source Applications report their first revision.
	u = load(t, "argocd/application-synced.yaml")
	unstructured.RemoveNestedField(u.Object, "status", "sync", "revision")
	_ = unstructured.SetNestedStringSlice(u.Object, []string{"cccc", "dddd"}, "status", "sync", "revisions")
	if o := Parse(u); o.Revision != "cccc" {
		t.Errorf("multi-source revision %q, want cccc", o.Revision)
	}
}

func TestNormalizeRevision(t *testing.T) {
	for in, want := range map[string]string{
		"main@sha1:" + shaA1:   shaA1,
		"master/" + shaA1:      shaA1,
		"sha1:" + shaA1:        shaA1,
		"v1.0.0@sha256:abc123": "abc123",
		aaaa:                   aaaa,
		"0.2.0":                "0.2.0",
		"feature/x":            "feature/x",
		"":                     "",
	} {
		if got := NormalizeRevision(in); got != want {
			t.Errorf("NormalizeRevision(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestCompactKeepsWhatParseReads(t *testing.T) {
	for _, file := range []string{
		"flux/kustomization-ready.yaml", "flux/kustomization-failed-retrying.yaml", "flux/gitrepository-fetch-failed.yaml",
		"argocd/application-synced.yaml", "argocd/application-out-of-sync.yaml", "argocd/application-sync-failed.yaml",
	} {
		u := load(t, file)
		u.SetLabels(map[string]string{LabelDeploymentTarget: "t", "app.kubernetes.io/name": "x"})
		small, err := compact(u)
		if err != nil {
			t.Fatal(err)
		}
		cu := small.(*unstructured.Unstructured)
		if got, want := Parse(cu), Parse(u); got != want {
			t.Errorf("%s: Parse(compact) = %+v, want %+v", file, got, want)
		}
		if _, ok := cu.GetLabels()["app.kubernetes.io/name"]; ok {
			t.Errorf("%s: compact kept a label the agent does not read", file)
		}
	}
}
