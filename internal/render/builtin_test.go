package render_test

import (
	"bytes"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fleetform/fleetform/api/v1alpha1"
	"github.com/fleetform/fleetform/internal/compose"
	"github.com/fleetform/fleetform/internal/controlplane"
	"github.com/fleetform/fleetform/internal/render"
	"github.com/fleetform/fleetform/internal/schedule"
	"github.com/fleetform/fleetform/internal/testutil/golden"
)

var update = flag.Bool("update", false, "rewrite golden files")

// builtinInput is a control plane whose cluster types use every built-in template; its
// rendered trees are the golden files under builtinWant/<environment>/.
const (
	builtinInput = "testdata/builtin/controlplane"
	builtinWant  = "testdata/builtin/want"
)

// wantBuiltins are the built-in templates and their types: the library's public names.
var wantBuiltins = map[string]string{
	"builtin/ansible":                v1alpha1.TemplateReconciler,
	"builtin/ansible-user":           v1alpha1.TemplateNamespace,
	"builtin/argocd":                 v1alpha1.TemplateReconciler,
	"builtin/configmap":              v1alpha1.TemplateConfig,
	"builtin/env-file":               v1alpha1.TemplateConfig,
	"builtin/flux":                   v1alpha1.TemplateReconciler,
	"builtin/namespace":              v1alpha1.TemplateNamespace,
	"builtin/namespace-as-a-service": v1alpha1.TemplateNamespace,
}

// TestBuiltinsParse guards NewEngine, which panics when a built-in template is broken.
func TestBuiltinsParse(t *testing.T) {
	e := render.NewEngine(&controlplane.Snapshot{})
	for name := range wantBuiltins {
		if _, ok := e.Lookup(name); !ok {
			t.Errorf("built-in %s is missing", name)
		}
	}
	got := render.BuiltinNames()
	for name, typ := range got {
		if want, ok := wantBuiltins[name]; !ok {
			t.Errorf("unexpected built-in %s: add it to wantBuiltins and to the golden control plane", name)
		} else if typ != want {
			t.Errorf("built-in %s has type %q, want %q", name, typ, want)
		}
	}
	if len(got) != len(wantBuiltins) {
		t.Errorf("BuiltinNames() has %d templates, want %d", len(got), len(wantBuiltins))
	}
}

// TestBuiltinHeaders checks that every built-in template file is named after its template
// and starts with a comment saying what it renders and which keys it reads.
func TestBuiltinHeaders(t *testing.T) {
	files, err := filepath.Glob("builtin/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no built-in template files: %v", err)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		name := "builtin/" + strings.TrimSuffix(filepath.Base(f), ".yaml")
		text := string(data)
		if !strings.HasPrefix(text, "# "+name+" (") {
			t.Errorf("%s: must start with %q", f, "# "+name+" (<type>...): renders ...")
		}
		if !strings.Contains(text, "\n  name: "+name+"\n") {
			t.Errorf("%s: the Template must be named %s", f, name)
		}
		for _, section := range []string{".Manifests", ".ConfigData"} {
			if !strings.Contains(text, "# "+section) {
				t.Errorf("%s: the header comment must say which %s keys the template reads", f, section)
			}
		}
	}
}

// TestBuiltinGolden renders the golden control plane, every environment, through the real
// pipeline (load, schedule, render) and compares the trees with the golden files.
func TestBuiltinGolden(t *testing.T) {
	for env, out := range renderGolden(t) {
		t.Run(env, func(t *testing.T) {
			golden.Tree(t, filepath.Join(builtinWant, env), out.Tree(), *update)
		})
	}
}

// TestBuiltinDeterministic renders twice and requires identical bytes.
func TestBuiltinDeterministic(t *testing.T) {
	first, second := renderGolden(t), renderGolden(t)
	for env, out := range first {
		a, b := out.Tree(), second[env].Tree()
		for p, content := range a {
			if !bytes.Equal(content, b[p]) {
				t.Errorf("%s/%s differs between two renders:\n%s", env, p, lineDiff(string(content), string(b[p])))
			}
		}
		if len(a) != len(b) {
			t.Errorf("%s: %d files, then %d", env, len(a), len(b))
		}
	}
}

// TestBuiltinErrors checks that templates refuse input they cannot render correctly, with
// a message that says what to fix.
func TestBuiltinErrors(t *testing.T) {
	e := render.NewEngine(&controlplane.Snapshot{})
	tests := []struct {
		name      string
		spec      v1alpha1.ClusterTypeSpec
		manifests map[string]string
		config    map[string]any
		want      string
	}{
		{"flux without repo", fluxSpec, map[string]string{"branch": "main"}, nil,
			"builtin/flux: manifests.repo is required"},
		{"flux without revision", fluxSpec, map[string]string{"repo": "https://example.com/x.git"}, nil,
			"builtin/flux: manifests.branch is required (or tag, semver or commit)"},
		{"flux with an scp-like URL", fluxSpec, map[string]string{"repo": "git@example.com:org/x.git", "branch": "main"}, nil,
			`builtin/flux: manifests.repo "git@example.com:org/x.git" must be an http, https or ssh URL`},
		{"flux with a bad interval", fluxSpec, map[string]string{"repo": "https://example.com/x.git", "branch": "main", "interval": "5 minutes"}, nil,
			`builtin/flux: manifests.interval "5 minutes" is not a duration`},
		{"argocd without repo", argoSpec, map[string]string{"branch": "main"}, nil,
			"builtin/argocd: manifests.repo is required"},
		{"ansible without repo", vmSpec, map[string]string{"branch": "main"}, nil,
			"builtin/ansible: manifests.repo is required"},
		{"ansible with a line break", vmSpec, map[string]string{"repo": "https://example.com/x.git", "branch": "main\n* * * * * root id"}, nil,
			"builtin/ansible: manifests.branch contains a line break"},
		{"ansible with a bad cron minute", vmSpec, map[string]string{"repo": "https://example.com/x.git", "cronMinute": "* * * * *"}, nil,
			`builtin/ansible: manifests.cronMinute "* * * * *" is not a cron minute field`},
		{"quota not a quantity", argoSpec, map[string]string{"repo": "https://example.com/x.git"},
			map[string]any{"NAMESPACE_MEMORY_QUOTA": "4 GB"},
			"builtin/namespace-as-a-service: NAMESPACE_MEMORY_QUOTA = 4 GB is not a Kubernetes quantity"},
		{"unknown pod security level", argoSpec, map[string]string{"repo": "https://example.com/x.git"},
			map[string]any{"NAMESPACE_POD_SECURITY": "strict"},
			"builtin/namespace-as-a-service: NAMESPACE_POD_SECURITY = strict: want privileged, baseline or restricted"},
		{"config key not a ConfigMap key", fluxSpec, map[string]string{"repo": "https://example.com/x.git", "branch": "main"},
			map[string]any{"my key": "x"},
			`builtin/configmap: config key "my key" cannot be a ConfigMap key`},
		{"secret provider class not a map", argoSpec, map[string]string{"repo": "https://example.com/x.git"},
			map[string]any{"SECRET_PROVIDER_CLASS": "azure"},
			"builtin/namespace-as-a-service: SECRET_PROVIDER_CLASS must be a YAML map"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := renderOne(t, e, tc.spec, tc.manifests, tc.config)
			var te *render.TemplateError
			if !errors.As(err, &te) {
				t.Fatalf("err = %v, want a *render.TemplateError", err)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v\nwant it to contain %q", err, tc.want)
			}
		})
	}
}

var (
	fluxSpec = v1alpha1.ClusterTypeSpec{Reconciler: "builtin/flux", NamespaceService: "builtin/namespace", ConfigType: "builtin/configmap"}
	argoSpec = v1alpha1.ClusterTypeSpec{Reconciler: "builtin/argocd", NamespaceService: "builtin/namespace-as-a-service", ConfigType: "builtin/configmap"}
	vmSpec   = v1alpha1.ClusterTypeSpec{Reconciler: "builtin/ansible", NamespaceService: "builtin/ansible-user", ConfigType: "builtin/env-file"}
)

// renderOne renders one assignment of deployment target "app-x" on cluster type "ct" in
// environment "dev" directly, without a control plane.
func renderOne(t *testing.T, e *render.Engine, spec v1alpha1.ClusterTypeSpec, manifests map[string]string, config map[string]any) (*render.Files, error) {
	t.Helper()
	ts, problems := e.TemplatesFor(spec)
	if len(problems) > 0 {
		t.Fatalf("templates: %v", problems)
	}
	if config == nil {
		config = map[string]any{}
	}
	a := &schedule.Assignment{
		Workload: "app", DeploymentTarget: "app-x", ClusterType: "ct", Namespace: "dev-ct-app-x",
		Target: &controlplane.DeploymentTarget{
			Name: "app-x", Environment: "dev", Workload: "app", Workspace: "team",
			Labels:    map[string]string{v1alpha1.LabelWorkload: "app", v1alpha1.LabelWorkspace: "team"},
			Manifests: manifests,
		},
	}
	return e.RenderAssignment("dev", a, &compose.Config{Data: config}, ts)
}

// renderGolden renders every environment of the golden control plane.
func renderGolden(t *testing.T) map[string]*render.Output {
	t.Helper()
	return renderAll(t, builtinInput, nil)
}

// renderAll renders every environment of the control plane at dir, with repository URLs
// mapped to local folders, and fails the test on any diagnostic or failed assignment.
func renderAll(t *testing.T, dir string, repoMap controlplane.RepoMap) map[string]*render.Output {
	t.Helper()
	cp, err := controlplane.Open(t.Context(), dir, controlplane.Options{RepoMap: repoMap})
	if err != nil {
		t.Fatal(err)
	}
	envs, diags, err := cp.Environments(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	failOnErrors(t, diags)
	outs := map[string]*render.Output{}
	for _, env := range envs {
		snap, err := cp.Load(t.Context(), env.Name)
		if err != nil {
			t.Fatal(err)
		}
		failOnErrors(t, snap.Diagnostics)
		sched := schedule.Schedule(snap)
		failOnErrors(t, sched.Diagnostics)
		if len(sched.Assignments) == 0 {
			t.Fatalf("environment %s: no assignments", env.Name)
		}
		out := render.Render(snap, sched, render.Options{})
		failOnErrors(t, out.Diagnostics)
		for _, a := range out.Failed() {
			t.Errorf("environment %s: %s on %s failed: %v", env.Name, a.DeploymentTarget, a.ClusterType, a.Err)
		}
		outs[env.Name] = out
	}
	return outs
}

func failOnErrors(t *testing.T, ds []controlplane.Diagnostic) {
	t.Helper()
	for _, d := range ds {
		t.Errorf("%s: %s", d.Severity, d.Error())
	}
	if t.Failed() {
		t.FailNow()
	}
}

// TestBuiltinRefusalBlamesTarget checks that when a built-in template refuses its input,
// the diagnostic points at the deployment target that has to change, not at the template.
func TestBuiltinRefusalBlamesTarget(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"environments/dev/env.yaml": `apiVersion: scheduler.kalypso.io/v1alpha1
kind: Environment
metadata:
  name: dev
spec:
  controlPlane: {repo: https://example.com/cp.git, branch: main, path: ./environments/dev}
---
apiVersion: scheduler.kalypso.io/v1alpha1
kind: ClusterType
metadata:
  name: small
spec: {reconciler: builtin/flux, namespaceService: builtin/namespace, configType: builtin/configmap}
---
apiVersion: scheduler.kalypso.io/v1alpha1
kind: SchedulingPolicy
metadata:
  name: all
spec:
  deploymentTargetSelector: {labelSelector: {}}
  clusterTypeSelector: {labelSelector: {}}
`,
		"workloads/app.yaml": `apiVersion: scheduler.kalypso.io/v1alpha1
kind: Workload
metadata:
  name: app
spec:
  deploymentTargets:
    - name: good
      environment: dev
      manifests: {repo: https://example.com/app.git, branch: main}
    - name: scp
      environment: dev
      manifests: {repo: "git@example.com:app.git", branch: main}
`,
	}
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cp, err := controlplane.Open(t.Context(), dir, controlplane.Options{})
	if err != nil {
		t.Fatal(err)
	}
	snap, err := cp.Load(t.Context(), "dev")
	if err != nil {
		t.Fatal(err)
	}
	failOnErrors(t, snap.Diagnostics)
	out := render.Render(snap, schedule.Schedule(snap), render.Options{})
	if got := len(out.Failed()); got != 1 {
		t.Fatalf("%d failed assignments, want 1 (app-scp)", got)
	}
	if len(out.Diagnostics) != 1 {
		t.Fatalf("diagnostics = %v, want 1", out.Diagnostics)
	}
	d := out.Diagnostics[0]
	if d.File != "workloads/app.yaml" || d.Line != 10 || d.Kind != "Workload" || d.Name != "app" || d.Path != "spec.deploymentTargets[1]" {
		t.Errorf("diagnostic at %s:%d %s/%s %s, want workloads/app.yaml:10 Workload/app spec.deploymentTargets[1]", d.File, d.Line, d.Kind, d.Name, d.Path)
	}
	want := `rendering app-scp on small: builtin/flux: manifests.repo "git@example.com:app.git" must be an http, https or ssh URL`
	if !strings.HasPrefix(d.Message, want) {
		t.Errorf("message = %q\nwant it to start with %q", d.Message, want)
	}
}
