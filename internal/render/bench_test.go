package render_test

import (
	"testing"

	"github.com/fleetform/fleetform/api/v1alpha1"
	"github.com/fleetform/fleetform/internal/compose"
	"github.com/fleetform/fleetform/internal/controlplane"
	"github.com/fleetform/fleetform/internal/render"
	"github.com/fleetform/fleetform/internal/schedule"
)

// benchKalypsoTemplates are Kalypso's arc-flux, namespace and configmap templates, as the
// synthetic fleet (internal/fleetgen) writes them.
var benchKalypsoTemplates = []*v1alpha1.Template{
	benchTemplate("arc-flux", v1alpha1.TemplateReconciler, `apiVersion: source.toolkit.fluxcd.io/v1beta2
kind: GitRepository
metadata:
  name: "{{ .DeploymentTargetName}}"
  namespace: flux-system
spec:
  interval: 30s
  url: "{{ .Manifests.repo}}"
  ref:
    branch: "{{ .Manifests.branch}}"
  secretRef:
      name: repo-secret
`, `apiVersion: kustomize.toolkit.fluxcd.io/v1beta2
kind: Kustomization
metadata:
  name: "{{ .DeploymentTargetName}}"
  namespace: flux-system
spec:
  interval: 30s
  targetNamespace: "{{ .Namespace}}"
  sourceRef:
    kind: GitRepository
    name: "{{ .DeploymentTargetName}}"
  path: "{{ .Manifests.path}}"
  prune: true
`),
	benchTemplate("default", v1alpha1.TemplateNamespace, `apiVersion: v1
kind: Namespace
metadata:
  name: "{{ .Namespace}}"
  labels:
    environment: "{{ .Environment}}"
    workspace: "{{ .Workspace}}"
    workload: "{{ .Workload}}"
    deploymentTarget: "{{ .DeploymentTargetName}}"
    someLabel: some-value
`),
	benchTemplate("configmap", v1alpha1.TemplateConfig, `apiVersion: v1
kind: ConfigMap
metadata:
  name: platform-config
  namespace: {{ .Namespace}}
data:
{{ stringify .ConfigData | indent 2}}
`),
}

func benchTemplate(name, typ string, manifests ...string) *v1alpha1.Template {
	return &v1alpha1.Template{Metadata: v1alpha1.ObjectMeta{Name: name}, Spec: v1alpha1.TemplateSpec{Type: typ, Manifests: manifests}}
}

// BenchmarkRenderAssignment renders the three files of one assignment, the step render.Render
// repeats for every assignment, with Kalypso-style control-plane templates and with each set
// of built-in templates.
func BenchmarkRenderAssignment(b *testing.B) {
	snap := &controlplane.Snapshot{}
	for _, t := range benchKalypsoTemplates {
		snap.Templates = append(snap.Templates, &controlplane.Template{Template: t})
	}
	e := render.NewEngine(snap)
	manifests := map[string]string{"repo": "https://example.com/shop-gitops.git", "branch": "main", "path": "./deploy/dev"}
	config := map[string]any{
		"ENVIRONMENT": "dev", "REGION": "West US", "CLUSTER_NAME": "Large", "REPLICAS": "3",
		"DATABASE_URL":    "mysql://west:8806/mysql2",
		"ALLOWED_ORIGINS": []any{"https://a.example.com", "https://b.example.com"},
		"DATABASE":        map[string]any{"host": "db.example.com", "port": 5432},
	}
	for _, bc := range []struct {
		name string
		spec v1alpha1.ClusterTypeSpec
	}{
		{"kalypso", v1alpha1.ClusterTypeSpec{Reconciler: "arc-flux", NamespaceService: "default", ConfigType: "configmap"}},
		{"builtin-flux", fluxSpec},
		{"builtin-argocd-naas", argoSpec},
		{"builtin-vm", vmSpec},
	} {
		b.Run(bc.name, func(b *testing.B) {
			ts, problems := e.TemplatesFor(bc.spec)
			if len(problems) > 0 {
				b.Fatal(problems)
			}
			a := &schedule.Assignment{
				Workload: "shop", DeploymentTarget: "shop-dev", ClusterType: "large", Namespace: "dev-large-shop-dev",
				Manifests: manifests,
				Target: &controlplane.DeploymentTarget{
					Name: "shop-dev", Environment: "dev", Workload: "shop", Workspace: "team-a",
					Labels:    map[string]string{v1alpha1.LabelWorkload: "shop", v1alpha1.LabelWorkspace: "team-a"},
					Manifests: manifests,
				},
			}
			cfg := &compose.Config{Data: config}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := e.RenderAssignment("dev", a, cfg, ts); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
