package authoring

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"

	"sigs.k8s.io/yaml"

	agentmanifests "github.com/fleetform/fleetform/deploy/agent"
	"github.com/fleetform/fleetform/internal/controlplane"
	"github.com/fleetform/fleetform/internal/gitops"
	"github.com/fleetform/fleetform/internal/repourl"
)

// Reconcilers a cluster is onboarded with.
const (
	ReconcilerFlux   = "flux"
	ReconcilerArgoCD = "argocd"
	ReconcilerHost   = "host"
)

// Names of what onboard cluster creates on a cluster.
const (
	// PlatformObject names the Flux GitRepository and Kustomization, or the Argo CD
	// Application, that sync the cluster type's folder of the GitOps repository.
	PlatformObject = "fleetform-platform"
	// AgentNamespace is the reporting agent's namespace (deploy/agent).
	AgentNamespace = "fleetform-system"
	// AgentTokenSecret holds the agent's token (key "token").
	AgentTokenSecret = "fleetform-agent-token"
	// LabelPlatform marks the platform reconciler, which the agent reports the revision of.
	LabelPlatform = "fleetform.io/platform"
	// HostTokenFile is where a host's agent reads its token.
	HostTokenFile = "/etc/fleetform/agent-token" //nolint:gosec // a path, not a secret
)

// GitOpsSource is where a cluster reads its desired state: the environment's GitOps
// repository, branch and folder (the cluster type's folder is under it).
type GitOpsSource struct {
	Repo   string `json:"repo"`
	Branch string `json:"branch"`
	Path   string `json:"path"`
}

// ClusterTarget is what the control plane says about a cluster to onboard: its
// environment's GitOps source and the reconciler its cluster type renders for.
type ClusterTarget struct {
	GitOps GitOpsSource
	// Reconciler is flux, argocd or host, from the cluster type's reconciler template.
	Reconciler string
	// Template is the cluster type's reconciler template.
	Template string
}

// ResolveCluster reads environment env of the control plane and returns what a cluster of
// clusterType needs. The GitOps repository is the environment's GitOpsRepo (or the
// operator's override in popts.GitOps) as the cluster reaches it: never a RepoMap path.
func ResolveCluster(ctx context.Context, location string, popts controlplane.Options, env, clusterType string) (ClusterTarget, error) {
	cp, err := controlplane.Open(ctx, location, popts)
	if err != nil {
		return ClusterTarget{}, err
	}
	s, err := cp.Load(ctx, env)
	if err != nil {
		return ClusterTarget{}, err
	}
	var names []string
	var template string
	for _, ct := range s.ClusterTypes {
		names = append(names, ct.Metadata.Name)
		if ct.Metadata.Name == clusterType {
			template = ct.Spec.Reconciler
		}
	}
	if template == "" {
		slices.Sort(names)
		return ClusterTarget{}, fmt.Errorf("cluster type %q is not defined in %s; defined: %s (add it with fleetform add cluster-type)",
			clusterType, env, orNone(names))
	}
	if err := clusterErrors(s, clusterType); err != nil {
		return ClusterTarget{}, err
	}
	t := gitops.ReadBy(cp, s)
	if t.Repo == "" {
		return ClusterTarget{}, fmt.Errorf("environment %s has no GitOpsRepo: the cluster has nothing to read", env)
	}
	src := GitOpsSource{Repo: t.Repo, Branch: t.Branch, Path: t.Path}
	if err := src.check(); err != nil {
		return ClusterTarget{}, err
	}
	return ClusterTarget{GitOps: src, Template: template, Reconciler: reconcilerOf(template)}, nil
}

// clusterErrors refuses to onboard a cluster from objects that do not validate: the
// environment, its GitOpsRepo and the cluster type (what the cluster is told to read).
func clusterErrors(s *controlplane.Snapshot, clusterType string) error {
	var errs []error
	for _, d := range s.Diagnostics {
		if d.Severity == controlplane.SeverityError &&
			(d.Kind == "Environment" || d.Kind == "GitOpsRepo" || (d.Kind == "ClusterType" && d.Name == clusterType)) {
			errs = append(errs, d)
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("the control plane does not validate, nothing is onboarded (fleetform validate shows the same):\n%w", errors.Join(errs...))
	}
	return nil
}

// check refuses a GitOps source a cluster cannot be told to read safely: a control
// character in its URL, branch or folder.
func (g GitOpsSource) check() error {
	for _, f := range []struct{ name, value string }{{"repository", g.Repo}, {"branch", g.Branch}, {"path", g.Path}} {
		if strings.ContainsFunc(f.value, controlplane.IsControl) {
			return fmt.Errorf("the GitOps %s %q contains a control character: fix the GitOpsRepo, nothing is onboarded", f.name, f.value)
		}
	}
	return nil
}

func orNone(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}

// reconcilerOf guesses the reconciler of a template: builtin/argocd renders for Argo CD,
// the Ansible and env-file templates for hosts, everything else for Flux.
func reconcilerOf(template string) string {
	t := strings.ToLower(template)
	switch {
	case strings.Contains(t, "argo"):
		return ReconcilerArgoCD
	case strings.Contains(t, "ansible"), strings.Contains(t, "env-file"), strings.Contains(t, "host"):
		return ReconcilerHost
	}
	return ReconcilerFlux
}

// ClusterOptions say what a cluster is onboarded as.
type ClusterOptions struct {
	Name        string
	Environment string
	ClusterType string
	Reconciler  string
	GitOps      GitOpsSource
	// Hub is the hub's URL; empty: no reporting agent.
	Hub string
	// Token is the cluster's token; empty: a placeholder.
	Token string
	// AgentImage replaces the agent's image (default: deploy/agent's).
	AgentImage string
}

// TokenPlaceholder stands for the token when it is not printed.
const TokenPlaceholder = "<the cluster's token, not printed to a terminal>" //nolint:gosec // a placeholder, not a secret

// HostFile is a file to install on a host.
type HostFile struct {
	Path    string `json:"path"`
	Mode    string `json:"mode"`
	Content string `json:"content"`
}

// ClusterBootstrap is everything a new cluster needs: for Kubernetes the objects to apply
// (the platform reconciler, the reporting agent with its token), for a host the agent's
// files and the commands that start it.
type ClusterBootstrap struct {
	Cluster     string           `json:"cluster"`
	Environment string           `json:"environment"`
	ClusterType string           `json:"clusterType"`
	Reconciler  string           `json:"reconciler"`
	GitOps      GitOpsSource     `json:"gitops"`
	Hub         string           `json:"hub,omitempty"`
	Objects     []map[string]any `json:"objects,omitempty"`
	Files       []HostFile       `json:"files,omitempty"`
	Commands    []string         `json:"commands,omitempty"`
	// TokenIncluded tells whether the token is in the objects or files (else a placeholder).
	TokenIncluded bool `json:"tokenIncluded"`
	// Notes say what the operator must do besides applying the objects (give the cluster
	// the GitOps repository's credentials, which are never printed).
	Notes []string `json:"notes,omitempty"`
}

// GitSecret is the Secret (in flux-system) a Flux cluster reads the GitOps repository's
// credentials from, when its URL held some.
const GitSecret = "fleetform-platform-git" //nolint:gosec // the name of a Secret, not a secret

// credentialsNote says how to give the cluster the credentials the GitOps URL held.
func credentialsNote(o ClusterOptions) string {
	switch o.Reconciler {
	case ReconcilerFlux:
		return fmt.Sprintf("the GitOps repository's URL holds credentials: they are not printed, and the GitRepository reads them from "+
			"the Secret flux-system/%s; create it with: flux create secret git %s --url=%s --username=USER --password=TOKEN",
			GitSecret, GitSecret, o.GitOps.Repo)
	case ReconcilerArgoCD:
		return fmt.Sprintf("the GitOps repository's URL holds credentials: they are not printed; give Argo CD the repository with: "+
			"argocd repo add %s --username USER --password TOKEN", o.GitOps.Repo)
	}
	return "the GitOps repository's URL holds credentials: they are not printed; give the host's git the credentials for " +
		o.GitOps.Repo + " (a credential helper, or a deploy key with an ssh URL)"
}

// ClusterFolder is the cluster type's folder in the GitOps repository, as "./a/b".
func ClusterFolder(g GitOpsSource, clusterType string) string {
	return "./" + path.Join(strings.TrimPrefix(path.Clean("/"+g.Path), "/"), clusterType)
}

// Unreachable reports whether the GitOps repository is a local path, which the cluster
// cannot read: its GitOpsRepo (or the config file's gitops) should give the repository's URL.
func (g GitOpsSource) Unreachable() bool {
	_, local := repourl.LocalPath(g.Repo)
	return local
}

// ClusterManifests builds what the cluster needs.
func ClusterManifests(o ClusterOptions) (*ClusterBootstrap, error) {
	if o.Reconciler == "" {
		o.Reconciler = ReconcilerFlux
	}
	if err := o.GitOps.check(); err != nil {
		return nil, err
	}
	for _, v := range []string{o.Name, o.Environment, o.ClusterType, o.Hub, o.Token} {
		if strings.ContainsFunc(v, controlplane.IsControl) {
			return nil, fmt.Errorf("%q contains a control character: nothing is onboarded", v)
		}
	}
	clean, hadCredentials := repourl.WithoutCredentials(o.GitOps.Repo)
	o.GitOps.Repo = clean // credentials are never printed, nor written into an object, a unit or a page
	b := &ClusterBootstrap{Cluster: o.Name, Environment: o.Environment, ClusterType: o.ClusterType, Reconciler: o.Reconciler,
		GitOps: o.GitOps, Hub: o.Hub, TokenIncluded: o.Token != ""}
	if hadCredentials {
		b.Notes = append(b.Notes, credentialsNote(o))
	}
	token := o.Token
	if token == "" {
		token = TokenPlaceholder
	}
	folder := ClusterFolder(o.GitOps, o.ClusterType)
	switch o.Reconciler {
	case ReconcilerFlux:
		b.Objects = fluxObjects(o, folder, hadCredentials)
	case ReconcilerArgoCD:
		b.Objects = []map[string]any{argoApplication(o, folder)}
	case ReconcilerHost:
		hostFiles(b, o, token)
		return b, nil
	default:
		return nil, fmt.Errorf("reconciler %q: want flux, argocd or host", o.Reconciler)
	}
	if o.Hub != "" {
		agent, err := agentObjects(o, token)
		if err != nil {
			return nil, err
		}
		b.Objects = append(agent, b.Objects...)
	}
	return b, nil
}

func platformMeta(namespace string) map[string]any {
	return map[string]any{"name": PlatformObject, "namespace": namespace,
		"labels": map[string]any{LabelPlatform: "true", "app.kubernetes.io/part-of": "fleetform"}}
}

// fluxObjects are a GitRepository on the environment's branch (reading its credentials from
// GitSecret when secret) and a Kustomization of the cluster type's folder (what Kalypso's tutorial creates with `az k8s-configuration flux
// create --kustomization path=<clusterType>`).
func fluxObjects(o ClusterOptions, folder string, secret bool) []map[string]any {
	repo := map[string]any{
		"apiVersion": "source.toolkit.fluxcd.io/v1", "kind": "GitRepository", "metadata": platformMeta("flux-system"),
		"spec": map[string]any{"url": o.GitOps.Repo, "ref": map[string]any{"branch": o.GitOps.Branch}, "interval": "1m"},
	}
	if secret {
		repo["spec"].(map[string]any)["secretRef"] = map[string]any{"name": GitSecret}
	}
	kust := map[string]any{
		"apiVersion": "kustomize.toolkit.fluxcd.io/v1", "kind": "Kustomization", "metadata": platformMeta("flux-system"),
		"spec": map[string]any{
			"sourceRef": map[string]any{"kind": "GitRepository", "name": PlatformObject},
			"path":      folder, "prune": true, "interval": "1m", "timeout": "5m",
		},
	}
	return []map[string]any{repo, kust}
}

// argoApplication is an Application of the cluster type's folder (every subfolder: one per
// deployment target), synced automatically.
func argoApplication(o ClusterOptions, folder string) map[string]any {
	return map[string]any{
		"apiVersion": "argoproj.io/v1alpha1", "kind": "Application", "metadata": platformMeta("argocd"),
		"spec": map[string]any{
			"project": "default",
			"source": map[string]any{"repoURL": o.GitOps.Repo, "targetRevision": o.GitOps.Branch, "path": strings.TrimPrefix(folder, "./"),
				"directory": map[string]any{"recurse": true}},
			"destination": map[string]any{"server": "https://kubernetes.default.svc"},
			"syncPolicy":  map[string]any{"automated": map[string]any{"prune": true, "selfHeal": true}},
		},
	}
}

// agentObjects are deploy/agent's objects, in its kustomization's order, with the hub and
// the cluster's name in the ConfigMap and the token in a Secret after it.
func agentObjects(o ClusterOptions, token string) ([]map[string]any, error) {
	var kust struct {
		Resources []string `json:"resources"`
	}
	data, err := fs.ReadFile(agentmanifests.Manifests, "kustomization.yaml")
	if err != nil {
		return nil, err
	}
	if err := yaml.Unmarshal(data, &kust); err != nil {
		return nil, fmt.Errorf("deploy/agent/kustomization.yaml: %w", err)
	}
	var out []map[string]any
	for _, f := range kust.Resources {
		data, err := fs.ReadFile(agentmanifests.Manifests, f)
		if err != nil {
			return nil, err
		}
		var obj map[string]any
		if err := yaml.Unmarshal(data, &obj); err != nil {
			return nil, fmt.Errorf("deploy/agent/%s: %w", f, err)
		}
		switch obj["kind"] {
		case "ConfigMap":
			obj["data"] = map[string]any{"hub": o.Hub, "cluster": o.Name}
			out = append(out, obj, agentSecret(token))
			continue
		case "Deployment":
			if o.AgentImage != "" {
				if err := setImage(obj, o.AgentImage); err != nil {
					return nil, err
				}
			}
		}
		out = append(out, obj)
	}
	return out, nil
}

func agentSecret(token string) map[string]any {
	return map[string]any{
		"apiVersion": "v1", "kind": "Secret",
		"metadata": map[string]any{"name": AgentTokenSecret, "namespace": AgentNamespace,
			"labels": map[string]any{"app.kubernetes.io/name": "fleetform-agent", "app.kubernetes.io/part-of": "fleetform"}},
		"type":       "Opaque",
		"stringData": map[string]any{"token": token},
	}
}

func setImage(deployment map[string]any, image string) error {
	spec, _ := deployment["spec"].(map[string]any)
	tmpl, _ := spec["template"].(map[string]any)
	pod, _ := tmpl["spec"].(map[string]any)
	containers, _ := pod["containers"].([]any)
	if len(containers) == 0 {
		return errors.New("deploy/agent/deployment.yaml has no container")
	}
	c, _ := containers[0].(map[string]any)
	if c == nil {
		return errors.New("deploy/agent/deployment.yaml: the container is not an object")
	}
	c["image"] = image
	return nil
}

// hostFiles are the host agent's systemd service and timer (docs/agents.md) and its token.
func hostFiles(b *ClusterBootstrap, o ClusterOptions, token string) {
	q := systemdQuote
	args := []string{"/usr/local/bin/fleetform agent host --once"}
	if o.Hub != "" {
		args = append(args, "--hub "+q(o.Hub)+" --cluster "+q(o.Name)+" --token-file "+q(HostTokenFile))
	}
	args = append(args, "--gitops "+q(o.GitOps.Repo)+" --branch "+q(o.GitOps.Branch))
	if p := strings.TrimPrefix(path.Clean("/"+o.GitOps.Path), "/"); p != "" {
		args = append(args, "--path "+q(p))
	}
	args = append(args, "--cluster-type "+q(o.ClusterType))
	service := "# fleetform host agent of " + commentSafe(o.Name) + " (" + commentSafe(o.Environment) + ", cluster type " +
		commentSafe(o.ClusterType) + "), written by fleetform onboard cluster\n" +
		"[Unit]\nDescription=fleetform host agent: apply this host's deployment targets and report them\n" +
		"Wants=network-online.target\nAfter=network-online.target\n\n" +
		"[Service]\nType=oneshot\nExecStart=" + strings.Join(args, " \\\n  ") + "\nTimeoutStartSec=1h\n"
	timer := "[Unit]\nDescription=Run the fleetform host agent every 5 minutes\n\n" +
		"[Timer]\nOnBootSec=1min\nOnUnitInactiveSec=5min\nRandomizedDelaySec=30s\n\n[Install]\nWantedBy=timers.target\n"
	if o.Hub != "" {
		b.Files = append(b.Files, HostFile{Path: HostTokenFile, Mode: "0600", Content: token + "\n"})
	}
	b.Files = append(b.Files,
		HostFile{Path: "/etc/systemd/system/fleetform-agent.service", Mode: "0644", Content: service},
		HostFile{Path: "/etc/systemd/system/fleetform-agent.timer", Mode: "0644", Content: timer})
	b.Commands = []string{"systemctl daemon-reload", "systemctl enable --now fleetform-agent.timer"}
}

// YAML is the Kubernetes objects as one YAML stream for kubectl apply -f -, after a
// comment saying what they are.
func (b *ClusterBootstrap) YAML() ([]byte, error) {
	var buf bytes.Buffer
	fmt.Fprintf(&buf, "# fleetform onboard cluster %s: environment %s, cluster type %s, %s reading %s (branch %s, %s)\n",
		b.Cluster, b.Environment, b.ClusterType, b.Reconciler, b.GitOps.Repo, b.GitOps.Branch, ClusterFolder(b.GitOps, b.ClusterType))
	if b.Hub != "" && !b.TokenIncluded {
		fmt.Fprintf(&buf, "# The Secret %s/%s holds a placeholder: the token was not printed to a terminal.\n", AgentNamespace, AgentTokenSecret)
	}
	for _, obj := range b.Objects {
		data, err := yaml.Marshal(obj)
		if err != nil {
			return nil, err
		}
		buf.WriteString("---\n")
		buf.Write(data)
	}
	return buf.Bytes(), nil
}

// Script is a host's files and commands as a shell script to run as root. Every value is
// single-quoted (no heredoc): nothing in it can end its quoting and become a command.
func (b *ClusterBootstrap) Script() string {
	var s strings.Builder
	fmt.Fprintf(&s, "#!/bin/sh\n# fleetform onboard cluster %s: environment %s, cluster type %s, a host reading %s (branch %s, %s).\n"+
		"# Run as root on the host (needs git and ansible-core; the agent binary at /usr/local/bin/fleetform).\nset -eu\n",
		commentSafe(b.Cluster), commentSafe(b.Environment), commentSafe(b.ClusterType), commentSafe(repourl.Redact(b.GitOps.Repo)),
		commentSafe(b.GitOps.Branch), commentSafe(ClusterFolder(b.GitOps, b.ClusterType)))
	for _, f := range b.Files {
		fmt.Fprintf(&s, "install -d -m 0755 %s\n", shellQuote(path.Dir(f.Path)))
		fmt.Fprintf(&s, "install -m %s /dev/null %s\n", shellQuote(f.Mode), shellQuote(f.Path))
		fmt.Fprintf(&s, "printf '%%s' %s > %s\n", shellQuote(f.Content), shellQuote(f.Path))
	}
	for _, c := range b.Commands {
		s.WriteString(c + "\n")
	}
	return s.String()
}

// systemdQuote quotes s as one argument of a systemd ExecStart= line: double quotes, with
// \ and " escaped, and % and $ doubled (systemd's specifiers and variables).
func systemdQuote(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "%", "%%", "$", "$$")
	return `"` + r.Replace(s) + `"`
}

// shellQuote quotes s for sh: single quotes, each ' written as '\”.
func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// commentSafe is s on one line, for a comment: control characters become '?'.
func commentSafe(s string) string {
	return strings.Map(func(r rune) rune {
		if controlplane.IsControl(r) {
			return '?'
		}
		return r
	}, s)
}
