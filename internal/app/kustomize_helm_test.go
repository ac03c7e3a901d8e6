package app_test

import (
	"strings"
	"testing"
)

// helmChartSource is a base whose kustomization inflates a small local chart (with a test
// hook, a values file and valuesInline), built through an overlay with a namespace.
func helmChartSource(settings, chartEntry string) map[string]string {
	return withFiles(kustomizeBase(), map[string]string{
		"fleetform-app.yaml": settings,
		"deploy/base/kustomization.yaml": "resources: [service.yaml]\nconfigMapGenerator:\n  - name: env\n    literals: [MODE=base]\n" +
			"helmCharts:\n" + chartEntry,
		"deploy/base/charts/hello/Chart.yaml":  "apiVersion: v2\nname: hello\nversion: 0.1.0\n",
		"deploy/base/charts/hello/values.yaml": "replicas: 1\nimage: nginx:1.27\nservice:\n  port: 80\n",
		"deploy/base/charts/hello/templates/deployment.yaml": "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n" +
			"  name: {{ .Release.Name }}-hello\n  labels:\n    kube: \"{{ .Capabilities.KubeVersion.Version }}\"\n" +
			"    ns: \"{{ .Release.Namespace }}\"\nspec:\n  replicas: {{ .Values.replicas }}\n  template:\n    spec:\n" +
			"      containers:\n        - name: hello\n          image: {{ .Values.image }}\n" +
			"---\napiVersion: v1\nkind: Service\nmetadata:\n  name: {{ .Release.Name }}-hello\nspec:\n" +
			"  ports:\n    - port: {{ .Values.service.port }}\n",
		"deploy/base/charts/hello/templates/tests/test.yaml": "apiVersion: v1\nkind: Pod\nmetadata:\n  name: {{ .Release.Name }}-test\n" +
			"  annotations:\n    \"helm.sh/hook\": test\nspec:\n  containers:\n    - name: t\n      image: busybox\n",
		"deploy/overlays/staging/kustomization.yaml": "namespace: staging\nnamePrefix: staging-\nresources: [../../base]\n",
	})
}

// TestKustomizeHelmCharts: helmCharts are inflated with the Helm SDK as kustomize build
// --enable-helm does with helm: the chart from charts/, valuesInline over its values, the
// overlay's namespace as the release's (and not set on the chart's objects), the test hook
// kept, the objects after the configMapGenerator's.
func TestKustomizeHelmCharts(t *testing.T) {
	got, err := renderKustomizeSource(t, helmChartSource("kustomize: deploy/overlays/staging\n",
		"  - name: hello\n    releaseName: hi\n    valuesInline:\n      replicas: 2\n      service: {port: 8080}\n"))
	if err != nil {
		t.Fatal(err)
	}
	checkYAML(t, got, `apiVersion: v1
kind: Service
metadata:
  name: staging-web
  namespace: staging
spec:
  ports:
  - port: 80
---
apiVersion: v1
data:
  MODE: base
kind: ConfigMap
metadata:
  name: staging-env-btf6f9dc9c
  namespace: staging
---
apiVersion: v1
kind: Service
metadata:
  name: staging-hi-hello
spec:
  ports:
  - port: 8080
---
apiVersion: apps/v1
kind: Deployment
metadata:
  labels:
    kube: v1.37.0
    ns: staging
  name: staging-hi-hello
spec:
  replicas: 2
  template:
    spec:
      containers:
      - image: nginx:1.27
        name: hello
---
apiVersion: v1
kind: Pod
metadata:
  annotations:
    helm.sh/hook: test
  name: staging-hi-test
spec:
  containers:
  - image: busybox
    name: t
`)
}

// TestKustomizeHelmRefusals: enableHelm: false refuses helmCharts naming the setting; a
// chart that would have to be pulled, or a release name helm would generate, are refused.
func TestKustomizeHelmRefusals(t *testing.T) {
	for name, c := range map[string]struct{ settings, entry, want string }{
		"enableHelm false": {"kustomize: deploy/overlays/staging\nenableHelm: false\n", "  - name: hello\n    releaseName: hi\n",
			"deploy/base/kustomization.yaml: helmCharts: enableHelm is false in fleetform-app.yaml (set enableHelm: true"},
		"not vendored": {"kustomize: deploy/overlays/staging\n", "  - name: hello\n    releaseName: hi\n    repo: https://charts.example.com\n    version: 0.2.0\n",
			"fleetform renders without network: vendor chart hello version 0.2.0 into deploy/base/charts/hello-0.2.0/hello/"},
		"no release name": {"kustomize: deploy/overlays/staging\n", "  - name: hello\n",
			"chart hello has no releaseName"},
		"a name template": {"kustomize: deploy/overlays/staging\n", "  - name: hello\n    nameTemplate: '{{ env \"HOME\" }}'\n",
			"nameTemplate is not supported"},
		"values outside the root": {"kustomize: deploy/overlays/staging\n", "  - name: hello\n    releaseName: hi\n    valuesFile: ../values.yaml\n",
			"deploy/values.yaml is not in or below deploy/base/ (kustomize's default load restrictor; set loadRestrictor: none"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := renderKustomizeSource(t, helmChartSource(c.settings, c.entry))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want %q", err, c.want)
			}
		})
	}
}
