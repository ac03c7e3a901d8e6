package app_test

import (
	"testing"
)

// TestKustomizeHelmChartList: a chart template that renders a List (here a List holding a
// ConfigMap and a SecretList) gives its items as kustomize build --enable-helm gives them:
// after the chart's other objects, and, like them, without the kustomization's namespace.
func TestKustomizeHelmChartList(t *testing.T) {
	got, err := renderKustomizeSource(t, map[string]string{
		"workload.yaml":      kustomizeWorkload,
		"fleetform-app.yaml": "kustomize: deploy\n",
		"deploy/kustomization.yaml": "namespace: prod\nhelmCharts:\n  - name: lists\n    releaseName: pi\n" +
			"resources: [cm.yaml]\n",
		"deploy/cm.yaml":                        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: plain\n",
		"deploy/charts/lists/Chart.yaml":        "apiVersion: v2\nname: lists\nversion: 1.0.0\n",
		"deploy/charts/lists/values.yaml":       "a: 1\n",
		"deploy/charts/lists/templates/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-direct\n",
		"deploy/charts/lists/templates/list.yaml": "apiVersion: v1\nkind: List\nitems:\n" +
			"  - apiVersion: v1\n    kind: ConfigMap\n    metadata:\n      name: in-list\n      labels: {z: \"1\", a: \"2\"}\n    data: {k: v}\n" +
			"  - apiVersion: v1\n    kind: SecretList\n    items:\n      - apiVersion: v1\n        kind: Secret\n        metadata:\n          name: s-in-list\n",
	})
	if err != nil {
		t.Fatal(err)
	}
	checkYAML(t, got, `apiVersion: v1
kind: ConfigMap
metadata:
  name: plain
  namespace: prod
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: pi-direct
---
apiVersion: v1
data:
  k: v
kind: ConfigMap
metadata:
  labels:
    a: "2"
    z: "1"
  name: in-list
---
apiVersion: v1
kind: Secret
metadata:
  name: s-in-list
`)
}
