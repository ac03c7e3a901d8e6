package app_test

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/fleetform/fleetform/internal/app"
	"github.com/fleetform/fleetform/internal/controlplane"
	"github.com/fleetform/fleetform/internal/gitops/gitrepo"
	"github.com/fleetform/fleetform/internal/testutil/gittest"
)

var benchEnvs = []string{"dev", "stage", "prod"}

// benchFleet is 200 deployment targets of the hello-world chart across 3 environments:
// a source git repository, a config directory in the folder shape.
type benchFleet struct {
	source  *gittest.Repo
	config  string
	sandbox *app.Sandbox // charts render in it when set
}

func newBenchFleet(b *testing.B, targets int) *benchFleet {
	b.Helper()
	root := filepath.Join(gittest.ModuleRoot(b), "examples", "apps", "hello-world", "source")
	return newBenchFleetOf(b, targets, gittest.ReadDir(b, root))
}

// newBenchFleetOf is targets deployment targets of the source files' chart.
func newBenchFleetOf(b *testing.B, targets int, files map[string]string) *benchFleet {
	b.Helper()
	var w strings.Builder
	w.WriteString("apiVersion: scheduler.kalypso.io/v1alpha1\nkind: Workload\nmetadata:\n  name: hello-world\nspec:\n  deploymentTargets:\n")
	f := &benchFleet{source: gittest.New(b), config: b.TempDir()}
	for i := range targets {
		env := benchEnvs[i%len(benchEnvs)]
		name := fmt.Sprintf("target-%03d", i)
		fmt.Fprintf(&w, "    - name: %s\n      environment: %s\n      namespace: %s\n      manifests: {repo: https://example.com/gitops, branch: %s, path: %s}\n", name, env, name, env, name)
		writeFile(b, filepath.Join(f.config, env, name, "values.yaml"), fmt.Sprintf("replicas: %d\nlogging:\n  level: Debug\n", 1+i%5))
	}
	for _, env := range benchEnvs {
		writeFile(b, filepath.Join(f.config, env, "values.yaml"), "greeting: Hello from "+env+"\n")
	}
	files["workload.yaml"] = w.String()
	f.source.Commit(b, "main", files)
	return f
}

func writeFile(b *testing.B, p, content string) {
	b.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o750); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		b.Fatal(err)
	}
}

// apply runs app apply for every environment (or only env) into the GitOps repository.
func (f *benchFleet) apply(b *testing.B, gitops, only string) int {
	b.Helper()
	repos := controlplane.NewRepos(nil, nil, nil)
	a := loadApp(b, repos, f.source.Dir)
	cfgRepo := openRepo(b, repos, f.config)
	repo, err := gitrepo.Open(b.Context(), gitops, "", nil, slog.New(slog.DiscardHandler))
	if err != nil {
		b.Fatal(err)
	}
	w := &app.Writer{Repo: repo, Author: object.Signature{Name: "bench", Email: "bench@example.com"}, Logger: slog.New(slog.DiscardHandler)}
	changed := 0
	for _, env := range benchEnvs {
		if only != "" && env != only {
			continue
		}
		r := newRun(b, a, cfgRepo, env, "", map[string]string{"IMAGE_NAME": "ghcr.io/example/hello-world"}, "1.4.2")
		r.In.Sandbox = f.sandbox
		res, err := w.Apply(b.Context(), r)
		if err != nil {
			b.Fatal(err)
		}
		if res.Failed() {
			b.Fatalf("%+v", res)
		}
		for _, br := range res.Branches {
			changed += len(br.Targets)
		}
	}
	return changed
}

// BenchmarkAppApplyCold is app apply of 200 targets (3 environments) into an empty GitOps
// repository: bar 5 s.
func BenchmarkAppApplyCold(b *testing.B) { benchCold(b, newBenchFleet(b, 200)) }

// BenchmarkAppApplyOneTarget changes one target's value and applies its environment: one
// target rendered and committed; bar 0.5 s.
func BenchmarkAppApplyOneTarget(b *testing.B) { benchOneTarget(b, newBenchFleet(b, 200)) }

// bigChart is a chart of 100 objects: 50 of its own and 10 in each of 5 subcharts (one
// behind a condition, one under an alias), each reading values.
func bigChart() map[string]string {
	files := map[string]string{
		"helm/Chart.yaml": "apiVersion: v2\nname: hello-world\nversion: 1.0.0\ndependencies:\n" +
			"  - {name: sub0, version: 1.0.0, condition: sub0.enabled}\n  - {name: sub1, version: 1.0.0}\n" +
			"  - {name: sub2, version: 1.0.0}\n  - {name: sub3, version: 1.0.0}\n  - {name: sub4, version: 1.0.0, alias: cache}\n",
		"helm/values.yaml": "replicas: 1\nimage: ghcr.io/example/hello-world:$IMAGE_TAG\nsub0: {enabled: true}\n",
	}
	object := func(kind string, i int) string {
		return fmt.Sprintf(`apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Release.Name }}-{{ .Chart.Name }}-%s-%d
  namespace: {{ .Release.Namespace }}
  labels: {app.kubernetes.io/name: {{ .Chart.Name | quote }}, app.kubernetes.io/instance: {{ .Release.Name | quote }}}
data:
  replicas: {{ .Values.replicas | default 1 | quote }}
  image: {{ .Values.image | default "none" | quote }}
  logging: {{ .Values.logging | toYaml | nindent 4 | quote }}
`, kind, i)
	}
	for i := range 50 {
		files[fmt.Sprintf("helm/templates/object-%02d.yaml", i)] = object("own", i)
	}
	for s := range 5 {
		dir := fmt.Sprintf("helm/charts/sub%d/", s)
		files[dir+"Chart.yaml"] = fmt.Sprintf("apiVersion: v2\nname: sub%d\nversion: 1.0.0\n", s)
		files[dir+"values.yaml"] = "replicas: 2\n"
		for i := range 10 {
			files[fmt.Sprintf("%stemplates/object-%02d.yaml", dir, i)] = object("sub", i)
		}
	}
	return files
}

// BenchmarkAppApplyColdChart is app apply of 200 targets (3 environments) of a 100-object
// chart with 5 subcharts into an empty GitOps repository: bar 10 s.
func BenchmarkAppApplyColdChart(b *testing.B) { benchCold(b, newBenchFleetOf(b, 200, bigChart())) }

// BenchmarkAppApplyColdChartSandbox is BenchmarkAppApplyColdChart with every chart rendered
// in the bounded worker process, as the command line renders them.
func BenchmarkAppApplyColdChartSandbox(b *testing.B) {
	exe, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	f := newBenchFleetOf(b, 200, bigChart())
	f.sandbox = app.NewSandbox(exe)
	defer f.sandbox.Close()
	benchCold(b, f)
}

// BenchmarkAppApplyOneTargetChart changes one target's value of the 100-object chart and
// applies its environment: bar 0.5 s.
func BenchmarkAppApplyOneTargetChart(b *testing.B) {
	benchOneTarget(b, newBenchFleetOf(b, 200, bigChart()))
}

// benchCold applies every environment of f into a new, empty GitOps repository.
func benchCold(b *testing.B, f *benchFleet) {
	b.Helper()
	for b.Loop() {
		b.StopTimer()
		gitops := gittest.NewBare(b)
		b.StartTimer()
		if n := f.apply(b, gitops.Dir, ""); n != 200 {
			b.Fatalf("%d targets written", n)
		}
	}
}

// benchOneTarget changes one dev target's value and applies dev: one target rendered and
// committed.
func benchOneTarget(b *testing.B, f *benchFleet) {
	b.Helper()
	gitops := gittest.NewBare(b)
	f.apply(b, gitops.Dir, "")
	level := []string{"Info", "Debug"}
	i := 0
	for b.Loop() {
		b.StopTimer()
		writeFile(b, filepath.Join(f.config, "dev", "target-042", "values.yaml"), "replicas: 3\nlogging:\n  level: "+level[i%2]+"\n")
		i++
		b.StartTimer()
		if n := f.apply(b, gitops.Dir, "dev"); n != 1 {
			b.Fatalf("%d targets written, want 1", n)
		}
	}
}
