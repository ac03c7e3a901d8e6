package deploy_test

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
	"helm.sh/helm/v3/pkg/lint"
	"helm.sh/helm/v3/pkg/lint/support"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8syaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// The release the chart is rendered as.
const (
	releaseName = "ff"
	namespace   = "fleet"
	fullname    = "ff-fleetform"
)

// serviceMonitor is the part of a monitoring.coreos.com/v1 ServiceMonitor the assertions
// read (the Prometheus Operator's Go types are not a dependency); the whole object is
// validated against the ServiceMonitor CRD's schema.
type serviceMonitor struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              struct {
		Selector          metav1.LabelSelector `json:"selector"`
		NamespaceSelector struct {
			MatchNames []string `json:"matchNames"`
		} `json:"namespaceSelector"`
		Endpoints []struct {
			Port          string `json:"port"`
			Path          string `json:"path"`
			Interval      string `json:"interval"`
			ScrapeTimeout string `json:"scrapeTimeout"`
		} `json:"endpoints"`
	} `json:"spec"`
}

// manifest is a rendered release, every object decoded strictly into its type.
type manifest struct {
	kinds          []string // apiVersion/kind of every object, in order
	configMaps     []corev1.ConfigMap
	services       []corev1.Service
	accounts       []corev1.ServiceAccount
	statefulSets   []appsv1.StatefulSet
	deployments    []appsv1.Deployment
	budgets        []policyv1.PodDisruptionBudget
	ingresses      []networkingv1.Ingress
	monitors       []serviceMonitor
	notes          string
	rawByTemplate  map[string]string
	monitorObjects []map[string]any
}

// decodeStrict decodes a YAML object into out, refusing unknown and duplicate fields as
// the API server does with strict field validation, and appends it.
func decodeStrict[T any](t *testing.T, where string, doc []byte, list *[]T) {
	t.Helper()
	var obj T
	if err := yaml.UnmarshalStrict(doc, &obj); err != nil {
		t.Errorf("%s: does not decode strictly: %v\n%s", where, err, doc)
		return
	}
	*list = append(*list, obj)
}

// decode adds the objects of one rendered template to m.
func (m *manifest) decode(t *testing.T, name, content string) {
	t.Helper()
	r := k8syaml.NewYAMLReader(bufio.NewReader(strings.NewReader(content)))
	for i := 0; ; i++ {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return
		}
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(bytes.TrimSpace(doc)) == 0 {
			continue
		}
		where := fmt.Sprintf("%s[%d]", name, i)
		var tm metav1.TypeMeta
		if err := yaml.Unmarshal(doc, &tm); err != nil {
			t.Fatalf("%s: %v\n%s", where, err, doc)
		}
		gvk := tm.APIVersion + "/" + tm.Kind
		m.kinds = append(m.kinds, gvk)
		switch gvk {
		case "v1/ConfigMap":
			decodeStrict(t, where, doc, &m.configMaps)
		case "v1/Service":
			decodeStrict(t, where, doc, &m.services)
		case "v1/ServiceAccount":
			decodeStrict(t, where, doc, &m.accounts)
		case "apps/v1/StatefulSet":
			decodeStrict(t, where, doc, &m.statefulSets)
		case "apps/v1/Deployment":
			decodeStrict(t, where, doc, &m.deployments)
		case "policy/v1/PodDisruptionBudget":
			decodeStrict(t, where, doc, &m.budgets)
		case "networking.k8s.io/v1/Ingress":
			decodeStrict(t, where, doc, &m.ingresses)
		case "monitoring.coreos.com/v1/ServiceMonitor":
			// The CRD's schema is the strict check (TestChartServiceMonitorAndIngress); the
			// struct has only the fields the assertions read.
			var sm serviceMonitor
			var obj map[string]any
			if err := errors.Join(yaml.Unmarshal(doc, &sm), yaml.Unmarshal(doc, &obj)); err != nil {
				t.Fatalf("%s: %v", where, err)
			}
			m.monitors = append(m.monitors, sm)
			m.monitorObjects = append(m.monitorObjects, obj)
		default:
			t.Errorf("%s: the chart renders %s, which this test does not know: decode it into its type here", where, gvk)
		}
	}
}

// renderChart renders the chart as `helm template` does (no cluster), with values (YAML)
// over values.yaml, validated by values.schema.json. Templates refer only to values that
// exist (strict mode).
func renderChart(t *testing.T, values string) (*manifest, error) {
	t.Helper()
	ch, err := loader.Load(repoPath(t, "deploy", "helm", "fleetform"))
	if err != nil {
		t.Fatal(err)
	}
	vals, err := chartutil.ReadValues([]byte(values))
	if err != nil {
		t.Fatal(err)
	}
	top, err := chartutil.ToRenderValues(ch, vals, chartutil.ReleaseOptions{Name: releaseName, Namespace: namespace, Revision: 1, IsInstall: true}, chartutil.DefaultCapabilities)
	if err != nil {
		return nil, err
	}
	out, err := engine.Engine{Strict: true}.Render(ch, top)
	if err != nil {
		return nil, err
	}
	again, err := engine.Engine{Strict: true}.Render(ch, top)
	if err != nil || !maps.Equal(out, again) {
		t.Errorf("rendering twice gives different output (%v)", err)
	}
	m := &manifest{rawByTemplate: out}
	for _, name := range slices.Sorted(maps.Keys(out)) {
		switch {
		case strings.HasSuffix(name, "/NOTES.txt"):
			m.notes = out[name]
		case strings.HasSuffix(name, ".yaml"):
			m.decode(t, name, out[name])
		}
	}
	return m, nil
}

// mustRender renders values that must render.
func mustRender(t *testing.T, values string) *manifest {
	t.Helper()
	m, err := renderChart(t, values)
	if err != nil {
		t.Fatalf("render: %v\nvalues:\n%s", err, values)
	}
	return m
}

const controlPlane = "https://git.example.com/platform/control-plane.git"

// Values of the test cases.
const (
	sqliteMinimal = `
config:
  controlPlane: ` + controlPlane + `
`
	secretsAndCredentials = `
secrets:
  adminToken:
    existingSecret: fleetform
  webhookSecret:
    existingSecret: fleetform
git:
  credentials:
    - url: https://git.example.com/platform/
      existingSecret: fleetform-git
      key: token
    - url: https://api.github.com
      username: x-access-token
      existingSecret: fleetform-github
      key: token
`
	sqliteFull = secretsAndCredentials + `
config:
  controlPlane: ` + controlPlane + `
  gitops:
    dev: https://git.example.com/platform/gitops-dev.git
    prod: https://git.example.com/platform/gitops-prod.git
environments: [dev, prod]
interval: 30s
`
	postgres3 = sqliteMinimal + secretsAndCredentials + `
replicaCount: 3
database:
  type: postgres
  postgres:
    url: postgres://fleetform@db.example.com:5432/fleetform?sslmode=verify-full
    passwordSecret:
      name: fleetform-db
environments: [prod]
`
	monitoredWithIngress = sqliteMinimal + `
secrets:
  webhookSecret:
    existingSecret: fleetform
serviceMonitor:
  enabled: true
  labels:
    release: prometheus
ingress:
  enabled: true
  className: nginx
  hosts:
    - host: fleetform.example.com
      paths:
        - path: /api/v1/webhooks/git
          pathType: Exact
  tls:
    - secretName: fleetform-tls
      hosts: [fleetform.example.com]
`
	sqliteExistingClaim = sqliteMinimal + `
database:
  sqlite:
    persistence:
      existingClaim: fleetform-data
`
)

func TestChartSQLite(t *testing.T) {
	for name, values := range map[string]string{"minimal": sqliteMinimal, "full": sqliteFull} {
		t.Run(name, func(t *testing.T) {
			m := mustRender(t, values)
			checkRelease(t, m)
			if len(m.statefulSets) != 1 || len(m.deployments) != 0 {
				t.Fatalf("SQLite: want one StatefulSet and no Deployment, got %v", m.kinds)
			}
			sts := m.statefulSets[0]
			if sts.Spec.Replicas == nil || *sts.Spec.Replicas != 1 {
				t.Errorf("SQLite: the StatefulSet has %v replicas, want exactly 1", sts.Spec.Replicas)
			}
			if len(sts.Spec.VolumeClaimTemplates) != 1 || sts.Spec.VolumeClaimTemplates[0].Name != "data" {
				t.Fatalf("SQLite: want one volume claim template, data: %+v", sts.Spec.VolumeClaimTemplates)
			}
			pvc := sts.Spec.VolumeClaimTemplates[0]
			if got := pvc.Spec.Resources.Requests[corev1.ResourceStorage]; got.String() != "5Gi" {
				t.Errorf("SQLite: the claim requests %s, want the default 5Gi", got.String())
			}
			if !slices.Equal(pvc.Spec.AccessModes, []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}) {
				t.Errorf("SQLite: access modes %v", pvc.Spec.AccessModes)
			}
			if v := volume(sts.Spec.Template.Spec, "data"); v != nil {
				t.Errorf("SQLite: the pod has its own data volume %+v besides the claim template", v)
			}
			args := containerArgs(t, sts.Spec.Template.Spec)
			if !slices.Contains(args, "--db=sqlite:/data/fleetform.db") {
				t.Errorf("SQLite: args %q do not put the database in /data", args)
			}
			if len(m.budgets) != 0 {
				t.Errorf("SQLite: a PodDisruptionBudget for one pod blocks node drains")
			}
		})
	}
}

func TestChartSQLiteFullValues(t *testing.T) {
	m := mustRender(t, sqliteFull)
	checkRelease(t, m)
	pod := m.statefulSets[0].Spec.Template.Spec
	args := containerArgs(t, pod)
	for _, want := range []string{"--env=dev", "--env=prod", "--interval=30s"} {
		if !slices.Contains(args, want) {
			t.Errorf("args %q lack %s", args, want)
		}
	}
	env := pod.Containers[0].Env
	want := []string{"FLEETFORM_HUB_ADMIN_TOKEN", "FLEETFORM_WEBHOOK_SECRET", "FLEETFORM_GIT_CREDENTIAL_0", "FLEETFORM_GIT_CREDENTIAL_1"}
	var got []string
	for _, e := range env {
		got = append(got, e.Name)
	}
	if !slices.Equal(got, want) {
		t.Errorf("environment %v, want %v", got, want)
	}
	config := configFile(t, m)
	if !strings.Contains(config, "prod: https://git.example.com/platform/gitops-prod.git") ||
		!strings.Contains(config, "username: x-access-token") {
		t.Errorf("fleetform.yaml lacks the GitOps repositories or a credential's username:\n%s", config)
	}
}

func TestChartSQLiteExistingClaim(t *testing.T) {
	m := mustRender(t, sqliteExistingClaim)
	checkRelease(t, m)
	sts := m.statefulSets[0]
	if len(sts.Spec.VolumeClaimTemplates) != 0 {
		t.Errorf("with an existing claim the StatefulSet must not create one: %+v", sts.Spec.VolumeClaimTemplates)
	}
	v := volume(sts.Spec.Template.Spec, "data")
	if v == nil || v.PersistentVolumeClaim == nil || v.PersistentVolumeClaim.ClaimName != "fleetform-data" {
		t.Errorf("the data volume is not the existing claim: %+v", v)
	}
}

func TestChartPostgres(t *testing.T) {
	m := mustRender(t, postgres3)
	checkRelease(t, m)
	if len(m.deployments) != 1 || len(m.statefulSets) != 0 {
		t.Fatalf("PostgreSQL: want one Deployment and no StatefulSet, got %v", m.kinds)
	}
	d := m.deployments[0]
	if d.Spec.Replicas == nil || *d.Spec.Replicas != 3 {
		t.Errorf("PostgreSQL: %v replicas, want 3", d.Spec.Replicas)
	}
	pod := d.Spec.Template.Spec
	if v := volume(pod, "data"); v == nil || v.EmptyDir == nil || v.PersistentVolumeClaim != nil {
		t.Errorf("PostgreSQL: /data must be an emptyDir (the git cache), not a claim: %+v", v)
	}
	args := containerArgs(t, pod)
	if !slices.Contains(args, "--db=postgres://fleetform@db.example.com:5432/fleetform?sslmode=verify-full") {
		t.Errorf("PostgreSQL: args %q lack the database URL", args)
	}
	if e := envVar(pod, "PGPASSWORD"); e == nil || e.ValueFrom == nil || e.ValueFrom.SecretKeyRef == nil ||
		e.ValueFrom.SecretKeyRef.Name != "fleetform-db" || e.ValueFrom.SecretKeyRef.Key != "password" {
		t.Errorf("PostgreSQL: PGPASSWORD does not come from the Secret fleetform-db, key password: %+v", e)
	}
	if len(m.budgets) != 1 {
		t.Fatalf("PostgreSQL with 3 replicas: want a PodDisruptionBudget, got %v", m.kinds)
	}
	pdb := m.budgets[0]
	if pdb.Spec.MaxUnavailable == nil || pdb.Spec.MaxUnavailable.IntValue() != 1 || !selects(pdb.Spec.Selector.MatchLabels, d.Spec.Template.Labels) {
		t.Errorf("the PodDisruptionBudget does not allow one pod of the Deployment down: %+v", pdb.Spec)
	}
}

func TestChartServiceMonitorAndIngress(t *testing.T) {
	m := mustRender(t, monitoredWithIngress)
	checkRelease(t, m)
	if len(m.monitors) != 1 || len(m.ingresses) != 1 {
		t.Fatalf("want a ServiceMonitor and an Ingress, got %v", m.kinds)
	}
	svc := m.services[0]
	sm := m.monitors[0]
	if !selects(sm.Spec.Selector.MatchLabels, svc.Labels) || !slices.Equal(sm.Spec.NamespaceSelector.MatchNames, []string{namespace}) {
		t.Errorf("the ServiceMonitor does not select the Service %s/%s: %+v", namespace, svc.Name, sm.Spec)
	}
	if len(sm.Spec.Endpoints) != 1 || sm.Spec.Endpoints[0].Port != svc.Spec.Ports[0].Name || sm.Spec.Endpoints[0].Path != "/metrics" {
		t.Errorf("the ServiceMonitor does not scrape /metrics on the Service's port %s: %+v", svc.Spec.Ports[0].Name, sm.Spec.Endpoints)
	}
	if sm.Labels["release"] != "prometheus" {
		t.Errorf("serviceMonitor.labels are not on the ServiceMonitor: %v", sm.Labels)
	}
	schema := serviceMonitorSchema(t)
	for _, obj := range m.monitorObjects {
		if err := schema.Validate(obj); err != nil {
			t.Errorf("the ServiceMonitor does not validate against its CRD's schema: %#v", err)
		}
	}

	ing := m.ingresses[0]
	if ing.Spec.IngressClassName == nil || *ing.Spec.IngressClassName != "nginx" || len(ing.Spec.TLS) != 1 || len(ing.Spec.Rules) != 1 {
		t.Fatalf("the Ingress lacks its class, TLS or rule: %+v", ing.Spec)
	}
	paths := ing.Spec.Rules[0].HTTP.Paths
	if len(paths) != 1 || paths[0].Path != "/api/v1/webhooks/git" || paths[0].PathType == nil || *paths[0].PathType != networkingv1.PathTypeExact {
		t.Fatalf("the Ingress does not route exactly the webhook path: %+v", paths)
	}
	if b := paths[0].Backend.Service; b == nil || b.Name != svc.Name || b.Port.Number != svc.Spec.Ports[0].Port {
		t.Errorf("the Ingress backend %+v is not the Service %s:%d", b, svc.Name, svc.Spec.Ports[0].Port)
	}
	if !strings.Contains(m.notes, "https://fleetform.example.com/api/v1/webhooks/git") {
		t.Errorf("NOTES.txt does not show the webhook URL:\n%s", m.notes)
	}

	plain := mustRender(t, sqliteMinimal)
	if len(plain.monitors) != 0 || len(plain.ingresses) != 0 {
		t.Errorf("the ServiceMonitor and the Ingress must be off by default: %v", plain.kinds)
	}
}

// TestChartRefusesValues: values that cannot work fail the render with a message that says
// what to change.
func TestChartRefusesValues(t *testing.T) {
	for _, tc := range []struct{ name, values, want string }{
		{"sqlite with 3 replicas", sqliteMinimal + "replicaCount: 3\n",
			"replicaCount is 3 but database.type is sqlite: SQLite allows exactly one replica"},
		{"no control plane", "replicaCount: 1\n", "config.controlPlane is required"},
		{"postgres without a URL", sqliteMinimal + "database:\n  type: postgres\n", "database.postgres.url is empty"},
		{"postgres URL with a password", sqliteMinimal + "database:\n  type: postgres\n  postgres:\n    url: postgres://ff:hunter2@db/ff\n",
			"database.postgres.url holds a password"},
		{"postgres URL with a password parameter", sqliteMinimal + "database:\n  type: postgres\n  postgres:\n    url: postgres://ff@db/ff?password=hunter2\n",
			"database.postgres.url holds a password"},
		{"unknown database", sqliteMinimal + "database:\n  type: mysql\n", "/database/type"},
		{"misspelt value", sqliteMinimal + "replicas: 3\n", "replicas"},
		{"a token written as a value", sqliteMinimal + "extraEnv:\n  - name: FLEETFORM_GIT_TOKEN\n    value: ghp_x\n", "extraEnv"},
		{"a credential without its Secret", sqliteMinimal + "git:\n  credentials:\n    - url: https://github.com\n", "existingSecret"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := renderChart(t, tc.values)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("render: %v, want an error with %q", err, tc.want)
			}
		})
	}
}

// TestChartLint runs helm lint's rules (Chart.yaml, values, templates) on the defaults
// (values.yaml alone, as `helm lint deploy/helm/fleetform` does) and on each value set.
func TestChartLint(t *testing.T) {
	for name, values := range map[string]string{"defaults": "", "sqlite": sqliteFull, "postgres": postgres3, "monitored": monitoredWithIngress} {
		t.Run(name, func(t *testing.T) {
			vals, err := chartutil.ReadValues([]byte(values))
			if err != nil {
				t.Fatal(err)
			}
			l := lint.All(repoPath(t, "deploy", "helm", "fleetform"), vals, namespace, false)
			for _, msg := range l.Messages {
				if msg.Severity >= support.WarningSev {
					t.Errorf("helm lint: %s", msg)
				}
			}
		})
	}
}
