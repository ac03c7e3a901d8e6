package fleetgen

// kalypsoTemplate is a Template in common content, written like Kalypso's control-plane
// samples (reference section 7.1): Go text/template manifests with Kalypso's field names.
type kalypsoTemplate struct {
	file, name, typ string
	manifests       []string
}

func (t *kalypsoTemplate) doc() *doc {
	d := &doc{}
	header(d, "Template", t.name)
	d.line("spec:")
	d.line("  type: %s", t.typ)
	d.line("  manifests:")
	for _, m := range t.manifests {
		d.line("    - |")
		d.block("      ", m)
	}
	return d
}

// kalypsoTemplates are Kalypso's arc-flux, argocd, namespace ("default") and configmap
// templates (main 4a0821c4) with trailing spaces removed; the configmap template uses
// stringify, as Kalypso's bootstrap templates do, so structured values stay valid data.
var kalypsoTemplates = []kalypsoTemplate{
	{file: "arc-flux.yaml", name: "arc-flux", typ: "reconciler", manifests: []string{`apiVersion: source.toolkit.fluxcd.io/v1beta2
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
`}},
	{file: "argocd.yaml", name: "argocd", typ: "reconciler", manifests: []string{`apiVersion: argoproj.io/v1alpha1
kind: Application
metadata:
  name: "{{ .DeploymentTargetName}}"
  namespace: argocd
spec:
    destination:
        server: https://kubernetes.default.svc
        namespace: "{{ .Namespace}}"
    project: default
    source:
        path: "{{ .Manifests.path}}"
        repoURL: "{{ .Manifests.repo}}"
        targetRevision: "{{ .Manifests.branch}}"
        directory:
            recurse: true
            include: '*.yaml'
            exclude: 'kustomization.yaml'
    syncPolicy:
        automated:
            prune: true
            selfHeal: true
            allowEmpty: false
        syncOptions:
        - CreateNamespace=true
`}},
	{file: "configmap.yaml", name: "configmap", typ: "config", manifests: []string{`apiVersion: v1
kind: ConfigMap
metadata:
  name: platform-config
  namespace: {{ .Namespace}}
data:
{{ stringify .ConfigData | indent 2}}
`}},
	{file: "namespace.yaml", name: "default", typ: "namespace", manifests: []string{`apiVersion: v1
kind: Namespace
metadata:
  name: "{{ .Namespace}}"
  labels:
    environment: "{{ .Environment}}"
    workspace: "{{ .Workspace}}"
    workload: "{{ .Workload}}"
    deploymentTarget: "{{ .DeploymentTargetName}}"
    someLabel: some-value
`}},
}
