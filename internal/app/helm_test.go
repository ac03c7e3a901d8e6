package app_test

import (
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/fleetform/fleetform/internal/app"
	"github.com/fleetform/fleetform/internal/controlplane"
	"github.com/fleetform/fleetform/internal/testutil/gittest"
)

// webChart is a chart with what real charts use: a dependency under a condition, the same
// dependency again under an alias, a subchart schema, .helmignore, a test hook, a CRD, a
// kubeVersion constraint, the release namespace and the cluster's API versions.
var webChart = map[string]string{
	"workload.yaml": `apiVersion: scheduler.kalypso.io/v1alpha1
kind: Workload
metadata:
  name: web
spec:
  deploymentTargets:
    - name: edge
      environment: dev
      namespace: shop
      manifests: {repo: https://example.com/gitops, branch: dev, path: edge}
`,
	"helm/Chart.yaml": `apiVersion: v2
name: web
version: 1.0.0
kubeVersion: ">=1.25.0-0"
dependencies:
  - {name: cache, version: "1.x", condition: cache.enabled}
  - {name: cache, alias: session, version: "1.x"}
`,
	"helm/values.yaml":   "cache:\n  enabled: false\nsession:\n  port: 7000\n",
	"helm/.helmignore":   "# not part of the chart\ntemplates/scratch.yaml\n",
	"helm/crds/crd.yaml": "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: widgets.example.com\n",
	"helm/templates/deployment.yaml": `apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ .Release.Name }}
  namespace: {{ .Release.Namespace }}
spec:
  template:
    spec:
      containers:
        - name: web
          args: ["--session={{ .Release.Name }}-session.{{ .Release.Namespace }}:{{ .Values.session.port }}"]
`,
	"helm/templates/scratch.yaml": "{{ fail \"the .helmignore leaves this out\" }}\n",
	"helm/templates/tests/ping.yaml": `apiVersion: v1
kind: Pod
metadata:
  name: {{ .Release.Name }}-ping
  annotations: {helm.sh/hook: test}
`,
	"helm/templates/monitor.yaml": `{{- if .Capabilities.APIVersions.Has "monitoring.coreos.com/v1" }}
apiVersion: monitoring.coreos.com/v1
kind: ServiceMonitor
metadata:
  name: {{ .Release.Name }}
{{- end }}
`,
	"helm/charts/cache/Chart.yaml":         "apiVersion: v2\nname: cache\nversion: 1.2.0\n",
	"helm/charts/cache/values.yaml":        "port: 6379\ntier: memory\n",
	"helm/charts/cache/values.schema.json": `{"type": "object", "properties": {"port": {"type": "integer"}}}`,
	"helm/charts/cache/templates/service.yaml": `apiVersion: v1
kind: Service
metadata:
  name: {{ .Release.Name }}-{{ .Chart.Name }}
  labels: {tier: {{ .Values.tier | quote }}}
spec:
  ports: [{port: {{ .Values.port }}}]
`,
}

// renderWeb renders the edge target of webChart changed by change, with the config values
// values; it returns the files or the error.
func renderWeb(t *testing.T, change map[string]string, values string) (map[string][]byte, error) {
	t.Helper()
	return renderWebIn(t, change, values, nil)
}

func TestHelmAsHelmRenders(t *testing.T) {
	tests := []struct {
		name    string
		change  map[string]string
		values  string
		has     map[string][]string // file: texts it holds
		hasNot  []string            // files that are not written
		wantErr []string
	}{{
		name: "conditions, aliases, CRDs, the namespace; .helmignore and test hooks leave files out",
		has: map[string][]string{
			"deployment-web.yaml":                               {"namespace: shop", "--session=web-session.shop:7000"},
			"service-web-session.yaml":                          {"port: 7000", `tier: "memory"`},
			"customresourcedefinition-widgets.example.com.yaml": {"kind: CustomResourceDefinition"},
		},
		hasNot: []string{"service-web-cache.yaml", "pod-web-ping.yaml", "servicemonitor-web.yaml"},
	}, {
		name:   "a null deletes a subchart's default; a condition turns a dependency on",
		values: "cache:\n  enabled: true\nsession:\n  tier: null\n",
		has: map[string][]string{
			"service-web-cache.yaml":   {"port: 6379", `tier: "memory"`},
			"service-web-session.yaml": {"labels: {tier: }"}, // quote of a deleted value prints nothing
		},
	}, {
		name: "test hooks and API versions when asked; CRDs left out when asked",
		change: map[string]string{"fleetform-app.yaml": "includeTests: true\nincludeCRDs: false\n" +
			"targets:\n  edge: {apiVersions: [monitoring.coreos.com/v1]}\n"},
		has:    map[string][]string{"pod-web-ping.yaml": {"helm.sh/hook: test"}, "servicemonitor-web.yaml": {"kind: ServiceMonitor"}},
		hasNot: []string{"customresourcedefinition-widgets.example.com.yaml"},
	}, {
		name:    "the chart's kubeVersion constraint",
		change:  map[string]string{"fleetform-app.yaml": "environments:\n  dev: {kubeVersion: v1.20.0}\n"},
		wantErr: []string{"requires kubeVersion >=1.25.0-0", "Kubernetes v1.20.0", "kubeVersion: in fleetform-app.yaml"},
	}, {
		name:    "a subchart's schema",
		values:  "session:\n  port: \"7000\"\n",
		wantErr: []string{"session", "port", "integer"},
	}, {
		name:    "a dependency missing from charts/",
		change:  map[string]string{"helm/charts/cache": ""},
		wantErr: []string{"dependency cache 1.x", "is not in helm/charts/", "helm dependency build helm"},
	}, {
		name: "a Chart.lock that charts/ does not match",
		change: map[string]string{"helm/Chart.lock": "dependencies:\n- {name: cache, repository: oci://example.com, version: 1.3.0}\n" +
			"digest: sha256:0\ngenerated: \"2026-01-01T00:00:00Z\"\n"},
		wantErr: []string{"dependency cache", "1.2.0 (Chart.lock pins 1.3.0)"},
	}, {
		name: "objects of the same name, and one named like a second one's file: each gets a file of its own",
		change: map[string]string{
			"helm/templates/a.yaml": "apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: migrate\n  annotations: {helm.sh/hook: pre-install}\n",
			"helm/templates/b.yaml": "apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: migrate\n",
			"helm/templates/c.yaml": "apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: migrate-2\n",
		},
		has: map[string][]string{
			"serviceaccount-migrate.yaml":   {"# Source: web/templates/b.yaml"},
			"serviceaccount-migrate-2.yaml": {"# Source: web/templates/c.yaml"},
			"serviceaccount-migrate-3.yaml": {"# Source: web/templates/a.yaml"},
			"kustomization.yaml":            {"- serviceaccount-migrate.yaml\n- serviceaccount-migrate-2.yaml\n", "- serviceaccount-migrate-3.yaml\n"},
		},
	}, {
		name: "a key given twice (helm template prints it; Flux's kustomize build refuses the folder)",
		change: map[string]string{
			"helm/templates/a.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: twice\n  labels:\n    app: web\n    app: web\n",
		},
		wantErr: []string{"web/templates/a.yaml", `"app" already set`, "kustomize build refuses", "give the key once"},
	}, {
		name:    "a release name Helm refuses",
		change:  map[string]string{"fleetform-app.yaml": "releaseName: Web_Team.A\n"},
		wantErr: []string{`releaseName "Web_Team.A"`, "at most 53 characters"},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			files, err := renderWeb(t, tc.change, tc.values)
			if len(tc.wantErr) > 0 {
				if err == nil {
					t.Fatalf("rendered, want an error with %q", tc.wantErr)
				}
				for _, s := range tc.wantErr {
					if !strings.Contains(err.Error(), s) {
						t.Errorf("error lacks %q:\n%v", s, err)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for f, texts := range tc.has {
				for _, s := range texts {
					if !strings.Contains(string(files[f]), s) {
						t.Errorf("%s lacks %q:\n%s\n(files: %v)", f, s, files[f], slices.Sorted(maps.Keys(files)))
					}
				}
			}
			for _, f := range tc.hasNot {
				if _, ok := files[f]; ok {
					t.Errorf("%s is written:\n%s", f, files[f])
				}
			}
		})
	}
}

// TestChartSchemaAsHelmChecks: the chart's values.schema.json is checked as Helm checks it,
// on the values Helm renders the chart with (its subcharts' defaults and imported values
// included), also when fleetform-app.yaml names another schema; in the sandbox as in
// process; each problem names the file that set the value when the config set it.
func TestChartSchemaAsHelmChecks(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	sandbox := app.NewSandbox(exe)
	defer sandbox.Close()
	importing := strings.Replace(webChart["helm/Chart.yaml"], `{name: cache, alias: session, version: "1.x"}`,
		`{name: cache, alias: session, version: "1.x", import-values: [{child: limits, parent: sessionLimits}]}`, 1)
	tests := []struct {
		name    string
		change  map[string]string
		values  string
		wantErr []string // nil: rendered
	}{{
		name:   "a key only a subchart's default sets",
		change: map[string]string{"helm/values.schema.json": `{"properties": {"session": {"required": ["port", "tier"]}}}`},
	}, {
		name:    "a subchart's default the schema refuses",
		change:  map[string]string{"helm/values.schema.json": `{"properties": {"session": {"properties": {"tier": {"const": "disk"}}}}}`},
		wantErr: []string{"target edge: the values break the schema", "session.tier: value must be 'disk' (rule properties/session/properties/tier/const of helm/values.schema.json)"},
	}, {
		name: "a key import-values adds",
		change: map[string]string{
			"helm/Chart.yaml":               importing,
			"helm/charts/cache/values.yaml": "port: 6379\ntier: memory\nlimits: {memory: 1Gi}\n",
			"helm/values.schema.json":       `{"additionalProperties": false, "properties": {"cache": {}, "session": {}}}`,
		},
		wantErr: []string{"additional properties 'sessionLimits' not allowed (rule additionalProperties of helm/values.schema.json)"},
	}, {
		name: "the chart's schema when the settings name another",
		change: map[string]string{
			"fleetform-app.yaml":      "schema: schemas/team.json\n",
			"schemas/team.json":       `{"properties": {"replicas": {"type": "integer"}}}`,
			"helm/values.schema.json": `{"properties": {"replicas": {"maximum": 5}}}`,
		},
		values:  "replicas: 9\n",
		wantErr: []string{"replicas: maximum: got 9, want 5 (rule properties/replicas/maximum of helm/values.schema.json); value set in config dev/edge/values.yaml:1"},
	}, {
		name: "the settings' schema still checks the composed values",
		change: map[string]string{
			"fleetform-app.yaml":      "schema: schemas/team.json\n",
			"schemas/team.json":       `{"properties": {"replicas": {"type": "integer"}}}`,
			"helm/values.schema.json": `{"properties": {"replicas": {"maximum": 5}}}`,
		},
		values:  "replicas: two\n",
		wantErr: []string{"replicas: got string, want integer (rule properties/replicas/type of schemas/team.json); value set in config dev/edge/values.yaml:1"},
	}}
	for _, tc := range tests {
		for _, box := range []*app.Sandbox{nil, sandbox} {
			name := map[bool]string{true: "in process", false: "in the sandbox"}[box == nil]
			t.Run(tc.name+"/"+name, func(t *testing.T) {
				_, err := renderWebIn(t, tc.change, tc.values, box)
				if tc.wantErr == nil {
					if err != nil {
						t.Fatalf("refused, helm renders: %v", err)
					}
					return
				}
				if err == nil {
					t.Fatalf("rendered, helm refuses: want %q", tc.wantErr)
				}
				for _, s := range tc.wantErr {
					if !strings.Contains(err.Error(), s) {
						t.Errorf("error lacks %q:\n%v", s, err)
					}
				}
			})
		}
	}
}

// TestRandomKeepsCommitted: an object whose only change comes from a random function keeps
// its committed bytes, so a change elsewhere does not rewrite it; Regenerate writes a new
// value.
func TestRandomKeepsCommitted(t *testing.T) {
	src, cfg, gitops := gittest.New(t), gittest.New(t), gittest.NewBare(t)
	src.Commit(t, "main", map[string]string{
		"workload.yaml":    webChart["workload.yaml"],
		"helm/Chart.yaml":  "apiVersion: v2\nname: web\nversion: 1.0.0\n",
		"helm/values.yaml": "greeting: hello\n",
		"helm/templates/secret.yaml": "apiVersion: v1\nkind: Secret\nmetadata:\n  name: web\ndata:\n" +
			"  password: {{ randAlphaNum 16 | b64enc }}\n  user: {{ \"admin\" | b64enc }}\n",
		"helm/templates/config.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: web\ndata:\n  greeting: {{ .Values.greeting }}\n",
	})
	repos := controlplane.NewRepos(nil, nil, nil)
	a := loadApp(t, repos, src.Dir)
	w := &app.Writer{Repo: openGitOps(t, gitops.Dir), Author: object.Signature{Name: "test", Email: "test@example.com"},
		Logger: slog.New(slog.DiscardHandler)}
	applyWith := func(greeting string, regenerate bool) app.TargetResult {
		cfg.Commit(t, "main", map[string]string{"dev/edge/values.yaml": "greeting: " + greeting + "\n"})
		run := newRun(t, a, openRepo(t, repos, cfg.Dir), "dev", "main", nil, "1.0.0")
		run.In.Regenerate = regenerate
		return apply(t, w, run).Targets[0]
	}
	changed := func(tr app.TargetResult) []string {
		var out []string
		for _, c := range tr.Changes {
			out = append(out, strings.TrimPrefix(c.Path, "edge/"))
		}
		return out
	}
	if tr := applyWith("hello", false); !slices.Contains(changed(tr), "secret-web.yaml") {
		t.Fatalf("first apply: the secret is not written: %v", changed(tr))
	}
	tr := applyWith("bonjour", false)
	if slices.Contains(changed(tr), "secret-web.yaml") || !slices.Contains(changed(tr), "configmap-web.yaml") {
		t.Errorf("a greeting changed: changes %v, want the config map and not the secret", changed(tr))
	}
	if !slices.Equal(tr.Kept, []string{"secret-web.yaml"}) {
		t.Errorf("kept %v, want the secret", tr.Kept)
	}
	if tr := applyWith("hola", true); !slices.Contains(changed(tr), "secret-web.yaml") || len(tr.Kept) > 0 {
		t.Errorf("regenerate: changes %v, kept %v: want a new secret", changed(tr), tr.Kept)
	}
}

// TestManifestsPathChecked: a target whose manifests.path names .git (which render --out
// would empty, taking the checkout's history with it) is refused before anything is
// rendered or written, as a GitOpsRepo's path is.
func TestManifestsPathChecked(t *testing.T) {
	for _, p := range []string{".git", "edge/.git", "x/.GIT/hooks"} {
		files := maps.Clone(webChart)
		files["workload.yaml"] = strings.Replace(files["workload.yaml"], "path: edge}", "path: "+p+"}", 1)
		src, cfg := gittest.New(t), gittest.New(t)
		src.Commit(t, "main", files)
		cfg.Commit(t, "main", map[string]string{"dev/edge/values.yaml": ""})
		repos := controlplane.NewRepos(nil, nil, nil)
		a := loadApp(t, repos, src.Dir)
		c, err := app.LoadConfig(openRepo(t, repos, cfg.Dir), "dev", "main")
		if err != nil {
			t.Fatal(err)
		}
		in, err := app.NewInputs(a, c, nil, nil, "1.0.0", "1.0.0")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := app.NewRun(in, "dev"); err == nil || !strings.Contains(err.Error(), "manifests.path") || !strings.Contains(err.Error(), ".git") {
			t.Errorf("path %s: %v, want it refused", p, err)
		}
	}
}

// TestSettingsPathsStayInTheSource: fleetform-app.yaml's workload: and schema: name files of
// the source repository: a path out of it, or a symbolic link, is refused.
func TestSettingsPathsStayInTheSource(t *testing.T) {
	outside := filepath.Join(t.TempDir(), "secret.yaml")
	if err := os.WriteFile(outside, []byte(webChart["workload.yaml"]), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, settings := range []string{"workload: ../../secret.yaml\n", "schema: /etc/passwd\n", "workload: link.yaml\n"} {
		dir := t.TempDir()
		for name, content := range webChart {
			p := filepath.Join(dir, filepath.FromSlash(name))
			if err := os.MkdirAll(filepath.Dir(p), 0o750); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.WriteFile(filepath.Join(dir, app.SettingsFile), []byte(settings), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(outside, filepath.Join(dir, "link.yaml")); err != nil {
			t.Fatal(err)
		}
		tree, err := openRepo(t, controlplane.NewRepos(nil, nil, nil), dir).Tree("")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := app.LoadSource(tree, "source"); err == nil || !strings.Contains(err.Error(), "is not a file of the source repository") {
			t.Errorf("%s: %v, want it refused", strings.TrimSpace(settings), err)
		}
	}
}
