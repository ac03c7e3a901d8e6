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
	source *gittest.Repo
	config string
}

func newBenchFleet(b *testing.B, targets int) *benchFleet {
	b.Helper()
	root := filepath.Join(gittest.ModuleRoot(b), "examples", "apps", "hello-world", "source")
	files := gittest.ReadDir(b, root)
	var w strings.Builder
	w.WriteString("apiVersion: scheduler.kalypso.io/v1alpha1\nkind: Workload\nmetadata:\n  name: hello-world\nspec:\n  deploymentTargets:\n")
	f := &benchFleet{source: gittest.New(b), config: b.TempDir()}
	for i := range targets {
		env := benchEnvs[i%len(benchEnvs)]
		name := fmt.Sprintf("target-%03d", i)
		fmt.Fprintf(&w, "    - name: %s\n      environment: %s\n      manifests: {repo: https://example.com/gitops, branch: %s, path: %s}\n", name, env, env, name)
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
func BenchmarkAppApplyCold(b *testing.B) {
	f := newBenchFleet(b, 200)
	for b.Loop() {
		b.StopTimer()
		gitops := gittest.NewBare(b)
		b.StartTimer()
		if n := f.apply(b, gitops.Dir, ""); n != 200 {
			b.Fatalf("%d targets written", n)
		}
	}
}

// BenchmarkAppApplyOneTarget changes one target's value and applies its environment: one
// target rendered and committed; bar 0.5 s.
func BenchmarkAppApplyOneTarget(b *testing.B) {
	f := newBenchFleet(b, 200)
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
