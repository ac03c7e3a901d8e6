package controlplane_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fleetform/fleetform/internal/controlplane"
)

// header is the first line of every scheduler document; with kindDoc, a document's lines are
// 1 apiVersion, 2 kind, 3 metadata, 4 name, and its body starts on line 5.
const header = "apiVersion: scheduler.kalypso.io/v1alpha1\n"

// kindDoc returns a scheduler document of kind and name followed by body (lines from 5 on).
func kindDoc(kind, name, body string) string {
	return header + "kind: " + kind + "\nmetadata:\n  name: " + name + "\n" + body
}

func envDoc(name string) string {
	return kindDoc("Environment", name, "spec:\n  controlPlane: {repo: \"\", branch: \"\", path: \"\"}\n")
}

func clusterTypeDoc(name string) string {
	return kindDoc("ClusterType", name, "spec:\n  reconciler: arc-flux\n  namespaceService: default\n  configType: configmap\n")
}

func templateDoc(name string) string {
	return kindDoc("Template", name, "spec:\n  type: reconciler\n  manifests:\n    - \"kind: {{ .Namespace }}\"\n")
}

func configMapDoc(name string) string {
	return "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: " + name + "\ndata:\n  KEY: value\n"
}

func baseRepoDoc(commit string) string {
	return kindDoc("BaseRepo", "main", "spec:\n  repo: https://example.com/control-plane\n  branch: main\n  path: .\n  commit: "+commit+"\n")
}

func workloadDoc(name string, envs ...string) string {
	var b strings.Builder
	b.WriteString(kindDoc("Workload", name, "spec:\n  deploymentTargets:\n"))
	for _, e := range envs {
		fmt.Fprintf(&b, "    - name: %s\n      environment: %s\n      manifests: {repo: https://example.com/%s, branch: main, path: ./%s}\n", e, e, name, e)
	}
	return b.String()
}

func registrationDoc(name, repo, branch, path, workspace string) string {
	return kindDoc("WorkloadRegistration", name, fmt.Sprintf(
		"spec:\n  workload:\n    repo: %s\n    branch: %q\n    path: %s\n  workspace: %s\n", repo, branch, path, workspace))
}

// joinDocs joins documents into one multi-document stream.
func joinDocs(docs ...string) string { return strings.Join(docs, "---\n") }

// writeFiles writes files (slash-separated path -> content) under dir.
func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for p, content := range files {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// newDir writes files into a new temporary directory and returns it.
func newDir(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	writeFiles(t, dir, files)
	return dir
}

func open(t *testing.T, location string, opts controlplane.Options) *controlplane.ControlPlane {
	t.Helper()
	cp, err := controlplane.Open(t.Context(), location, opts)
	if err != nil {
		t.Fatalf("Open(%s): %v", location, err)
	}
	return cp
}

func load(t *testing.T, location, env string, opts controlplane.Options) *controlplane.Snapshot {
	t.Helper()
	snap, err := open(t, location, opts).Load(t.Context(), env)
	if err != nil {
		t.Fatalf("Load(%s): %v", env, err)
	}
	return snap
}

// loadFolder loads environment dev of a folder-layout control plane made of files plus
// environments/dev/env.yaml.
func loadFolder(t *testing.T, files map[string]string) *controlplane.Snapshot {
	t.Helper()
	all := map[string]string{"environments/dev/env.yaml": envDoc("dev")}
	for k, v := range files {
		all[k] = v
	}
	return load(t, newDir(t, all), "dev", controlplane.Options{})
}

// want describes one expected diagnostic: severity (error when empty), file, line and
// substrings of its text.
type want struct {
	sev  controlplane.Severity
	file string
	line int
	has  []string
}

func (w want) String() string {
	sev := w.sev
	if sev == "" {
		sev = controlplane.SeverityError
	}
	return fmt.Sprintf("%s %s:%d %q", sev, w.file, w.line, w.has)
}

func (w want) matches(d controlplane.Diagnostic) bool {
	sev := w.sev
	if sev == "" {
		sev = controlplane.SeverityError
	}
	if d.Severity != sev || d.File != w.file || d.Line != w.line {
		return false
	}
	text := d.Error()
	for _, s := range w.has {
		if !strings.Contains(text, s) {
			return false
		}
	}
	return true
}

// checkDiags requires got to be exactly the wanted diagnostics, in any order.
func checkDiags(t *testing.T, got []controlplane.Diagnostic, wants ...want) {
	t.Helper()
	used := make([]bool, len(got))
	for _, w := range wants {
		found := false
		for i, d := range got {
			if !used[i] && w.matches(d) {
				used[i], found = true, true
				break
			}
		}
		if !found {
			t.Errorf("missing diagnostic %v", w)
		}
	}
	for i, d := range got {
		if !used[i] {
			t.Errorf("unexpected diagnostic: %s %v (line %d)", d.Severity, d, d.Line)
		}
	}
}

// loaded lists the snapshot's objects as sorted "Kind/name" strings.
func loaded(s *controlplane.Snapshot) []string {
	var out []string
	add := func(kind, name string) { out = append(out, kind+"/"+name) }
	for _, o := range s.ClusterTypes {
		add("ClusterType", o.Metadata.Name)
	}
	for _, o := range s.SchedulingPolicies {
		add("SchedulingPolicy", o.Metadata.Name)
	}
	for _, o := range s.Templates {
		add("Template", o.Metadata.Name)
	}
	for _, o := range s.ConfigMaps {
		add("ConfigMap", o.Metadata.Name)
	}
	for _, o := range s.ConfigSchemas {
		add("ConfigSchema", o.Metadata.Name)
	}
	for _, o := range s.Registrations {
		add("WorkloadRegistration", o.Metadata.Name)
	}
	for _, o := range s.Workloads {
		add("Workload", o.Metadata.Name)
	}
	for _, o := range s.DeploymentTargets {
		add("DeploymentTarget", o.Name)
	}
	if s.GitOpsRepo != nil {
		add("GitOpsRepo", s.GitOpsRepo.Metadata.Name)
	}
	if s.BaseRepo != nil {
		add("BaseRepo", s.BaseRepo.Metadata.Name)
	}
	for _, o := range s.AccessPolicies {
		add("AccessPolicy", o.Metadata.Name)
	}
	slices.Sort(out)
	return out
}

// checkLoaded requires the snapshot to hold exactly the listed objects.
func checkLoaded(t *testing.T, s *controlplane.Snapshot, want ...string) {
	t.Helper()
	slices.Sort(want)
	if got := loaded(s); !slices.Equal(got, want) {
		t.Errorf("loaded objects:\n got  %q\n want %q", got, want)
	}
}

func templateNames(s *controlplane.Snapshot) []string {
	var out []string
	for _, o := range s.Templates {
		out = append(out, o.Metadata.Name)
	}
	slices.Sort(out)
	return out
}

func clusterTypeNames(s *controlplane.Snapshot) []string {
	var out []string
	for _, o := range s.ClusterTypes {
		out = append(out, o.Metadata.Name)
	}
	slices.Sort(out)
	return out
}

func targetNames(s *controlplane.Snapshot) []string {
	var out []string
	for _, o := range s.DeploymentTargets {
		out = append(out, o.Name)
	}
	slices.Sort(out)
	return out
}

func requireNoDiags(t *testing.T, s *controlplane.Snapshot) {
	t.Helper()
	for _, d := range s.Diagnostics {
		t.Errorf("unexpected diagnostic: %s %v", d.Severity, d)
	}
}

func equal(t *testing.T, what string, got, want []string) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Errorf("%s = %q, want %q", what, got, want)
	}
}
