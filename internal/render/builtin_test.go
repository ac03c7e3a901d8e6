package render_test

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
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
	out := renderFiles(t, files)
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

// renderFiles writes a control plane of the given files and renders its environment dev,
// failing the test on a diagnostic of loading.
func renderFiles(t *testing.T, files map[string]string) *render.Output {
	t.Helper()
	dir := t.TempDir()
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
	return render.Render(snap, schedule.Schedule(snap), render.Options{})
}

// TestBuiltinAnsibleUsers: the OS user both Ansible templates render is the one the
// renderer derives (render.HostUser) to find shared users: <environment>-<target>, or, past
// 32 characters, 23 of them, '-' and 8 hex digits.
func TestBuiltinAnsibleUsers(t *testing.T) {
	e := render.NewEngine(&controlplane.Snapshot{})
	ts, problems := e.TemplatesFor(vmSpec)
	if len(problems) > 0 {
		t.Fatal(problems)
	}
	users := func(target string) (reconciler, namespace string) {
		t.Helper()
		a := &schedule.Assignment{Workload: "app", DeploymentTarget: target, ClusterType: "vm", Namespace: "ns",
			Target: &controlplane.DeploymentTarget{Name: target, Environment: "dev", Workload: "app", Workspace: "team",
				Labels:    map[string]string{v1alpha1.LabelWorkload: "app", v1alpha1.LabelWorkspace: "team"},
				Manifests: map[string]string{"repo": "https://example.com/app.git"}}}
		f, err := e.RenderAssignment("dev", a, &compose.Config{Data: map[string]any{}}, ts)
		if err != nil {
			t.Fatal(err)
		}
		r := regexp.MustCompile(`\n\s+user: "([^"]*)"`).FindStringSubmatch(string(f.Reconciler))
		n := regexp.MustCompile(`ansible\.builtin\.user:\n\s+name: "([^"]*)"`).FindStringSubmatch(string(f.Namespace))
		if r == nil || n == nil {
			t.Fatalf("%s: no user in\n%s\n%s", target, f.Reconciler, f.Namespace)
		}
		return r[1], n[1]
	}
	victim := "payments-ledger-reconciliation-worker"
	for _, target := range []string{
		"app-x",
		"a-28-character-target-name-x", // dev-<target>: 32 characters, kept
		"a-29-character-target-name-xy",
		victim,
		"a-target-name-17c--then-the-rest-of-it", // cut after "--": the dashes go
		"a.target.name.17ch.x-and-more-text-goes-here", // cut after ".": the dot goes
	} {
		r, n := users(target)
		want := render.HostUser("dev", target)
		if r != want || n != want {
			t.Errorf("%s: reconciler user %q, namespace user %q, want %q", target, r, n, want)
		}
		if full := "dev-" + target; len(full) <= 32 && want != full || len(full) > 32 && !regexp.MustCompile(`^[a-z0-9.-]{1,23}-[0-9a-f]{8}$`).MatchString(want) {
			t.Errorf("%s: user %q", target, want)
		}
	}
}

// hostEnvironment is environment dev with a host cluster type vm (the Ansible templates), a
// Kubernetes one, k8s, and a policy that schedules every target on both.
const hostEnvironment = `apiVersion: scheduler.kalypso.io/v1alpha1
kind: Environment
metadata:
  name: dev
spec:
  controlPlane: {repo: https://example.com/cp.git, branch: main, path: ./environments/dev}
---
apiVersion: scheduler.kalypso.io/v1alpha1
kind: ClusterType
metadata:
  name: vm
spec: {reconciler: builtin/ansible, namespaceService: builtin/ansible-user, configType: builtin/env-file}
---
apiVersion: scheduler.kalypso.io/v1alpha1
kind: ClusterType
metadata:
  name: k8s
spec: {reconciler: builtin/flux, namespaceService: builtin/namespace, configType: builtin/configmap}
---
apiVersion: scheduler.kalypso.io/v1alpha1
kind: SchedulingPolicy
metadata:
  name: all
spec:
  deploymentTargetSelector: {labelSelector: {}}
  clusterTypeSelector: {labelSelector: {}}
`

// hostWorkload is a Workload of a workspace with the deployment targets given in YAML.
func hostWorkload(name, workspace, targets string) string {
	return `apiVersion: scheduler.kalypso.io/v1alpha1
kind: Workload
metadata:
  name: ` + name + `
  labels: {workspace: ` + workspace + `}
spec:
  deploymentTargets:
` + targets
}

// TestBuiltinAnsibleSharedUser: two deployment targets of a cluster type whose (shortened)
// OS users are equal are not rendered, and each is blamed, naming the other; the targets of
// other cluster types, and the rest of this one, are rendered.
func TestBuiltinAnsibleSharedUser(t *testing.T) {
	// dev-payments-ledger-reconciliation-67262 and -97425 share the first 8 hex digits of
	// their SHA-256: both are shortened to dev-payments-ledger-rec-2c5ca23b.
	out := renderFiles(t, map[string]string{
		"environments/dev/env.yaml": hostEnvironment,
		"workloads/payments.yaml": hostWorkload("payments", "payments", `    - name: ledger-reconciliation-67262
      environment: dev
      manifests: {repo: https://example.com/payments.git, branch: main}
    - name: api
      environment: dev
      manifests: {repo: https://example.com/payments.git, branch: main}
`),
		"workloads/ledger.yaml": hostWorkload("payments-ledger", "billing", `    - name: reconciliation-97425
      environment: dev
      manifests: {repo: https://example.com/ledger.git, branch: main}
`),
	})
	if u, v := render.HostUser("dev", "payments-ledger-reconciliation-67262"), render.HostUser("dev", "payments-ledger-reconciliation-97425"); u != v {
		t.Fatalf("the test's targets have users %q and %q: find two names whose users are equal", u, v)
	}
	failed := map[string]string{}
	for _, a := range out.Failed() {
		failed[a.Dir()] = a.Err.Error()
		var se *render.SharedUserError
		if !errors.As(a.Err, &se) {
			t.Errorf("%s: err %v, want a *render.SharedUserError", a.Dir(), a.Err)
		}
	}
	want := map[string]string{
		"vm/payments-ledger-reconciliation-67262": `deployment targets "payments-ledger-reconciliation-67262" and "payments-ledger-reconciliation-97425" would run as the same OS user "dev-payments-ledger-rec-2c5ca23b" on this cluster type`,
		"vm/payments-ledger-reconciliation-97425": `deployment targets "payments-ledger-reconciliation-97425" and "payments-ledger-reconciliation-67262" would run as the same OS user "dev-payments-ledger-rec-2c5ca23b" on this cluster type`,
	}
	for dir, msg := range want {
		if !strings.HasPrefix(failed[dir], msg) {
			t.Errorf("%s: err %q\nwant it to start with %q", dir, failed[dir], msg)
		}
	}
	if len(failed) != len(want) || len(out.Assignments) != 6 {
		t.Errorf("failed %v of %d assignments, want the two on vm of 6", failed, len(out.Assignments))
	}
	var blamed []string
	for _, d := range out.Diagnostics {
		blamed = append(blamed, fmt.Sprintf("%s %s:%d %s", d.Severity, d.File, d.Line, d.Path))
		if !strings.Contains(d.Message, "payments-ledger-reconciliation-67262") || !strings.Contains(d.Message, "payments-ledger-reconciliation-97425") {
			t.Errorf("diagnostic %q does not name both targets", d.Message)
		}
	}
	wantBlamed := []string{"error workloads/ledger.yaml:8 spec.deploymentTargets[0]", "error workloads/payments.yaml:8 spec.deploymentTargets[0]"}
	if !slices.Equal(blamed, wantBlamed) {
		t.Errorf("diagnostics at %q, want %q", blamed, wantBlamed)
	}
}

// TestBuiltinAnsibleUserNamedLikeAShortenedOne: a deployment target named after another's
// shortened OS user (another team's, to run as it) is not rendered, nor is the other: each
// would run as the other's user.
func TestBuiltinAnsibleUserNamedLikeAShortenedOne(t *testing.T) {
	victim, attacker := "payments-ledger-reconciliation-worker", "payments-ledger-rec-02c72972"
	if u := render.HostUser("dev", victim); u != "dev-"+attacker {
		t.Fatalf("the victim's user is %q, want dev-%s", u, attacker)
	}
	out := renderFiles(t, map[string]string{
		"environments/dev/env.yaml": hostEnvironment,
		"workloads/payments.yaml": hostWorkload("payments", "payments", `    - name: ledger-reconciliation-worker
      environment: dev
      manifests: {repo: https://example.com/payments.git, branch: main}
    - name: ledger-rec-02c72972
      environment: dev
      manifests: {repo: https://example.com/other.git, branch: main}
`),
	})
	var failed []string
	for _, a := range out.Failed() {
		var se *render.SharedUserError
		if errors.As(a.Err, &se) && se.User == "dev-"+attacker {
			failed = append(failed, a.Dir())
		}
	}
	slices.Sort(failed)
	if want := []string{"vm/" + attacker, "vm/" + victim}; !slices.Equal(failed, want) {
		t.Errorf("refused for sharing an OS user: %v, want %v", failed, want)
	}
}
