package app_test

import (
	"context"
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
	"github.com/fleetform/fleetform/internal/gitops/gitrepo"
	"github.com/fleetform/fleetform/internal/testutil/gittest"
)

// example is the hello-world example as three real git repositories.
type example struct {
	source, config, gitops *gittest.Repo
	sourceFiles            map[string]string
	dev, stage             map[string]string // config branch contents
}

var vars = map[string]string{"IMAGE_NAME": "ghcr.io/example/hello-world"}

// newExample builds the example's repositories; branch says which config shape.
func newExample(t *testing.T, branchShape bool) *example {
	t.Helper()
	root := filepath.Join(gittest.ModuleRoot(t), "examples", "apps", "hello-world")
	ex := &example{source: gittest.New(t), config: gittest.New(t), gitops: gittest.NewBare(t)}
	ex.sourceFiles = gittest.ReadDir(t, filepath.Join(root, "source"))
	ex.source.Commit(t, "main", ex.sourceFiles)
	ex.dev = gittest.ReadDir(t, filepath.Join(root, "config", "dev"))
	ex.stage = gittest.ReadDir(t, filepath.Join(root, "config", "stage"))
	ex.commitConfig(t, branchShape)
	return ex
}

func (ex *example) commitConfig(t *testing.T, branchShape bool) {
	t.Helper()
	if branchShape {
		ex.config.Commit(t, "dev", ex.dev)
		ex.config.Commit(t, "stage", ex.stage)
		return
	}
	all := map[string]string{}
	for p, c := range ex.dev {
		all["dev/"+p] = c
	}
	for p, c := range ex.stage {
		all["stage/"+p] = c
	}
	ex.config.Commit(t, "main", all)
}

// run composes an environment of the example.
func (ex *example) run(t *testing.T, env, version string) *app.Run {
	t.Helper()
	repos := controlplane.NewRepos(nil, nil, nil)
	a := loadApp(t, repos, ex.source.Dir)
	cfgRepo := openRepo(t, repos, ex.config.Dir)
	ref := ""
	if !cfgRepo.HasBranch(env) {
		ref = "main"
	}
	return newRun(t, a, cfgRepo, env, ref, vars, version)
}

// openRepo opens the git repository in dir.
func openRepo(tb testing.TB, repos *controlplane.Repos, dir string) *controlplane.Repo {
	tb.Helper()
	r, err := repos.Open(tb.Context(), dir)
	if err != nil {
		tb.Fatal(err)
	}
	return r
}

// loadApp loads the application on the main branch of the source repository in dir.
func loadApp(tb testing.TB, repos *controlplane.Repos, dir string) *app.App {
	tb.Helper()
	tree, err := openRepo(tb, repos, dir).Tree("main")
	if err != nil {
		tb.Fatal(err)
	}
	a, err := app.LoadSource(tree, "source")
	if err != nil {
		tb.Fatal(err)
	}
	return a
}

// newRun composes env of a with the values of cfgRepo at ref (env's own branch when "")
// and the variables appVars, at version (also the image tag).
func newRun(tb testing.TB, a *app.App, cfgRepo *controlplane.Repo, env, ref string, appVars map[string]string, version string) *app.Run {
	tb.Helper()
	cfg, err := app.LoadConfig(cfgRepo, env, ref)
	if err != nil {
		tb.Fatal(err)
	}
	in, err := app.NewInputs(a, cfg, appVars, nil, version, version)
	if err != nil {
		tb.Fatal(err)
	}
	r, err := app.NewRun(in, env)
	if err != nil {
		tb.Fatal(err)
	}
	return r
}

func (ex *example) writer(t *testing.T) *app.Writer {
	t.Helper()
	return &app.Writer{Repo: openGitOps(t, ex.gitops.Dir), Author: object.Signature{Name: "test", Email: "test@example.com"}, Logger: slog.New(slog.DiscardHandler)}
}

// openGitOps opens the app GitOps repository in dir for writing.
func openGitOps(t *testing.T, dir string) *gitrepo.Repo {
	t.Helper()
	repo, err := gitrepo.Open(t.Context(), dir, t.TempDir(), nil, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	return repo
}

func apply(t *testing.T, w *app.Writer, r *app.Run) *app.Result {
	t.Helper()
	res, err := w.Apply(context.Background(), r)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func TestApplyBothShapes(t *testing.T) {
	for _, branchShape := range []bool{true, false} {
		name := map[bool]string{true: "branch", false: "folder"}[branchShape]
		t.Run(name, func(t *testing.T) {
			ex := newExample(t, branchShape)
			w := ex.writer(t)
			res := apply(t, w, ex.run(t, "dev", "1.4.2"))
			if res.Failed() || res.NoChange || len(res.Branches) != 1 || res.ConfigShape != name {
				t.Fatalf("result %+v", res)
			}
			files := ex.gitops.Files(t, "dev")
			want := []string{
				"functional-test/.github/tracking/Config_Commit_Id", "functional-test/.github/tracking/Image_tag",
				"functional-test/.github/tracking/Inputs_Digest", "functional-test/.github/tracking/Promoted_Commit_Id",
				"functional-test/.github/tracking/Version", "functional-test/configmap-hello-world-config.yaml",
				"functional-test/deployment-hello-world.yaml", "functional-test/kustomization.yaml",
			}
			for _, p := range want {
				if _, ok := files[p]; !ok {
					t.Errorf("%s missing; files: %v", p, slices.Sorted(maps.Keys(files)))
				}
			}
			perf := files["performance-test/configmap-hello-world-config.yaml"]
			for _, s := range []string{`LOG_LEVEL: "Debug"`, `LOG_FORMAT: "text"`, `GREETING: "Hello from dev"`, `VERSION: "1.4.2"`} {
				if !strings.Contains(perf, s) {
					t.Errorf("performance-test config map lacks %s:\n%s", s, perf)
				}
			}
			if d := files["functional-test/deployment-hello-world.yaml"]; !strings.Contains(d, "image: ghcr.io/example/hello-world:1.4.2") ||
				!strings.Contains(d, "containerPort: 9090") {
				t.Errorf("functional-test deployment:\n%s", d)
			}
			if got := files["functional-test/kustomization.yaml"]; got != "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n"+
				"- configmap-hello-world-config.yaml\n- deployment-hello-world.yaml\n" {
				t.Errorf("kustomization.yaml:\n%s", got)
			}
			if got := files["performance-test/.github/tracking/Promoted_Commit_Id"]; got != ex.source.Tip(t, "main").String()+"\n" {
				t.Errorf("Promoted_Commit_Id %q", got)
			}
			// Nothing changed: no commit.
			tip := ex.gitops.Tip(t, "dev")
			if res := apply(t, w, ex.run(t, "dev", "1.4.2")); !res.NoChange || len(res.Branches) != 0 || ex.gitops.Tip(t, "dev") != tip {
				t.Errorf("second apply %+v", res)
			}
		})
	}
}

// TestOnlyWhatChanged is the seeds' use case 3: performance-test's logging level from
// Debug to Info re-renders and commits that target only.
func TestOnlyWhatChanged(t *testing.T) {
	ex := newExample(t, true)
	w := ex.writer(t)
	apply(t, w, ex.run(t, "dev", "1.4.2"))
	before := ex.gitops.Files(t, "dev")
	ex.dev["performance-test/values.yaml"] = strings.Replace(ex.dev["performance-test/values.yaml"], "Debug", "Info", 1)
	ex.config.Commit(t, "dev", ex.dev)

	res := apply(t, w, ex.run(t, "dev", "1.4.2"))
	if len(res.Branches) != 1 || !slices.Equal(res.Branches[0].Targets, []string{"performance-test"}) {
		t.Fatalf("branches %+v", res.Branches)
	}
	after := ex.gitops.Files(t, "dev")
	var changed []string
	for p := range after {
		if after[p] != before[p] {
			changed = append(changed, p)
		}
	}
	slices.Sort(changed)
	want := []string{"performance-test/.github/tracking/Config_Commit_Id", "performance-test/.github/tracking/Inputs_Digest",
		"performance-test/configmap-hello-world-config.yaml", "performance-test/deployment-hello-world.yaml"}
	if !slices.Equal(changed, want) {
		t.Errorf("changed %v, want %v", changed, want)
	}
	c, err := ex.gitops.Git.CommitObject(ex.gitops.Tip(t, "dev"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(c.Message, "Deploy hello-world 1.4.2 to dev: performance-test\n") {
		t.Errorf("commit message %q", c.Message)
	}

	// A new version (the chart's inputs) re-renders every target of the environment.
	res = apply(t, w, ex.run(t, "dev", "1.4.3"))
	if len(res.Branches) != 1 || len(res.Branches[0].Targets) != 2 {
		t.Errorf("new version: %+v", res.Branches)
	}
}

func TestStaleFilesPruned(t *testing.T) {
	ex := newExample(t, true)
	// Someone else's file outside the targets' folders, and a stale one inside.
	ex.gitops.Commit(t, "dev", map[string]string{"README.md": "app GitOps\n", "performance-test/old/gen_manifests.yaml": "stale\n"})
	w := ex.writer(t)
	apply(t, w, ex.run(t, "dev", "1.0.0"))
	files := ex.gitops.Files(t, "dev")
	if _, ok := files["performance-test/old/gen_manifests.yaml"]; ok {
		t.Error("stale file kept")
	}
	if files["README.md"] != "app GitOps\n" {
		t.Error("a file outside the targets' folders changed")
	}
}

func TestSchemaRefusalWritesNothing(t *testing.T) {
	ex := newExample(t, true)
	ex.dev["performance-test/values.yaml"] = "replicas: 20\nlogging:\n  level: Verbose\n"
	ex.config.Commit(t, "dev", ex.dev)
	w := ex.writer(t)
	res := apply(t, w, ex.run(t, "dev", "1.0.0"))
	perf := res.Targets[1]
	if perf.Target != "performance-test" || perf.Status != app.StatusFailed {
		t.Fatalf("performance-test %+v", perf)
	}
	for _, s := range []string{"replicas: maximum: got 20, want 10 (rule properties/replicas/maximum of helm/values.schema.json); value set in config performance-test/values.yaml:1",
		"logging.level: value must be one of", "value set in config performance-test/values.yaml:3"} {
		if !strings.Contains(perf.Error, s) {
			t.Errorf("error lacks %q:\n%s", s, perf.Error)
		}
	}
	for p := range ex.gitops.Files(t, "dev") {
		if strings.HasPrefix(p, "performance-test/") {
			t.Errorf("%s written for a refused target", p)
		}
	}
	if res.Targets[0].Status != app.StatusChanged {
		t.Errorf("functional-test was blocked: %+v", res.Targets[0])
	}
}

func TestFolderMismatch(t *testing.T) {
	ex := newExample(t, true)
	ex.dev["performance-tests/values.yaml"] = ex.dev["performance-test/values.yaml"]
	delete(ex.dev, "performance-test/values.yaml")
	ex.config.Commit(t, "dev", ex.dev)
	res := apply(t, ex.writer(t), ex.run(t, "dev", "1.0.0"))
	if len(res.Mismatches) != 2 {
		t.Fatalf("mismatches %+v", res.Mismatches)
	}
	var msgs []string
	for _, m := range res.Mismatches {
		msgs = append(msgs, m.Message)
	}
	all := strings.Join(msgs, "\n")
	for _, s := range []string{"config folder performance-tests (branch dev) matches no deployment target of environment dev in the workload: did you mean performance-test?",
		"deployment target performance-test of environment dev has no folder in the config repository (branch dev): did you mean performance-tests"} {
		if !strings.Contains(all, s) {
			t.Errorf("mismatches lack %q:\n%s", s, all)
		}
	}
	if res.Targets[0].Status != app.StatusChanged || res.Targets[1].Status != app.StatusFailed {
		t.Errorf("targets %+v", res.Targets)
	}
}

// TestUndeclaredVariableKept: a $NAME the run does not define is left as it is (a chart's
// template snippet), one it declares must be given.
func TestUndeclaredVariableKept(t *testing.T) {
	ex := newExample(t, true)
	ex.dev["functional-test/values.yaml"] += "endpoint: https://$API_HOST/v1\n"
	ex.config.Commit(t, "dev", ex.dev)
	r := ex.run(t, "dev", "1.0.0")
	ft, _ := r.Target("functional-test")
	if ft.Err != nil {
		t.Fatal(ft.Err)
	}
	if got, _ := ft.Values.Get("endpoint"); got != "https://$API_HOST/v1" {
		t.Errorf("endpoint %v", got)
	}

	ex.sourceFiles["fleetform-app.yaml"] = strings.Replace(ex.sourceFiles["fleetform-app.yaml"], "variables: [IMAGE_NAME]", "variables: [IMAGE_NAME, API_HOST]", 1)
	ex.source.Commit(t, "main", ex.sourceFiles)
	ft, _ = ex.run(t, "dev", "1.0.0").Target("functional-test")
	if ft.Err == nil || !strings.Contains(ft.Err.Error(), "functional-test/values.yaml:3: variable API_HOST is not set (give it with --var API_HOST=VALUE)") {
		t.Errorf("error %v", ft.Err)
	}
	repos := controlplane.NewRepos(nil, nil, nil)
	given := map[string]string{"IMAGE_NAME": "ghcr.io/example/hello-world", "API_HOST": "api.example.com"}
	r = newRun(t, loadApp(t, repos, ex.source.Dir), openRepo(t, repos, ex.config.Dir), "dev", "", given, "1.0.0")
	ft, _ = r.Target("functional-test")
	if got, _ := ft.Values.Get("endpoint"); ft.Err != nil || got != "https://api.example.com/v1" {
		t.Errorf("endpoint %v, %v", got, ft.Err)
	}
}

// TestDeclaredImageName: the example declares IMAGE_NAME, so a run without it is refused.
func TestDeclaredImageName(t *testing.T) {
	ex := newExample(t, true)
	repos := controlplane.NewRepos(nil, nil, nil)
	a := loadApp(t, repos, ex.source.Dir)
	cfg, err := app.LoadConfig(openRepo(t, repos, ex.config.Dir), "dev", "")
	if err != nil {
		t.Fatal(err)
	}
	_, err = app.NewInputs(a, cfg, nil, nil, "1.0.0", "1.0.0")
	if err == nil || !strings.Contains(err.Error(), "helm/values.yaml:6: variable IMAGE_NAME is not set (give it with --var IMAGE_NAME=VALUE)") {
		t.Errorf("error %v", err)
	}
}

func TestRenderDirDeterministic(t *testing.T) {
	ex := newExample(t, false)
	a, b := t.TempDir(), t.TempDir()
	for _, dir := range []string{a, b} {
		if _, err := ex.run(t, "stage", "2.0.0").WriteDir(t.Context(), dir); err != nil {
			t.Fatal(err)
		}
	}
	fa, fb := gittest.ReadDir(t, a), gittest.ReadDir(t, b)
	if !maps.Equal(fa, fb) || len(fa) == 0 {
		t.Errorf("two renders differ or are empty: %v", slices.Sorted(maps.Keys(fa)))
	}
	if _, err := os.Stat(filepath.Join(a, "uat-test", "deployment-hello-world.yaml")); err != nil {
		t.Error(err)
	}
	for _, tr := range ex.run(t, "stage", "2.0.0").Targets { // each folder builds as Flux builds it
		files := map[string][]byte{}
		for name, data := range gittest.ReadDir(t, filepath.Join(a, tr.Target.Path)) {
			files[name] = []byte(data)
		}
		checkFluxBuild(t, files, "stage-"+tr.Target.Name)
	}
}

func TestSetLayerWins(t *testing.T) {
	ex := newExample(t, true)
	r := ex.run(t, "dev", "1.0.0")
	in, err := app.NewInputs(r.In.App, r.In.Config, vars, []string{"replicas=5", "logging.level=Error"}, "1.0.0", "1.0.0")
	if err != nil {
		t.Fatal(err)
	}
	v, err := in.Compose("performance-test")
	if err != nil {
		t.Fatal(err)
	}
	p := v.Prov["logging.level"]
	if got, _ := v.Get("replicas"); got != int64(5) || p.Source != (app.Source{Repo: "command line", File: "--set"}) ||
		len(p.Shadowed) != 2 || p.Shadowed[0].Value != "Debug" {
		t.Errorf("replicas %v, logging.level %+v", got, p)
	}
	if files := in.Files("performance-test"); !slices.Equal(files, []string{"source helm/values.yaml", "config values.yaml",
		"config performance-test/values.yaml", "command line --set"}) {
		t.Errorf("files %v", files)
	}
}

// TestRenderDirRefusesLinks: a symbolic link inside the output folder where a target's
// files go (the target's folder, a file in it, a folder above it) fails that target:
// nothing is written through it, nothing outside the output folder changes.
func TestRenderDirRefusesLinks(t *testing.T) {
	ex := newExample(t, false)
	for _, where := range []string{"folder", "file", "above"} {
		t.Run(where, func(t *testing.T) {
			out, outside := t.TempDir(), t.TempDir()
			secret := filepath.Join(outside, "kustomization.yaml")
			if err := os.WriteFile(secret, []byte("mine\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			run := ex.run(t, "stage", "2.0.0")
			target := run.Targets[0].Target.Path
			link, to := filepath.Join(out, target), outside
			switch where {
			case "file":
				if err := os.MkdirAll(link, 0o750); err != nil {
					t.Fatal(err)
				}
				link, to = filepath.Join(link, "kustomization.yaml"), secret
			case "above":
				run.Targets[0].Target.Path = "nested/" + target
				link = filepath.Join(out, "nested")
			}
			if err := os.Symlink(to, link); err != nil {
				t.Fatal(err)
			}
			res, err := run.WriteDir(t.Context(), out)
			if err != nil {
				t.Fatal(err)
			}
			if tr := res.Targets[0]; tr.Status != app.StatusFailed || !strings.Contains(tr.Error, "is a symbolic link") {
				t.Errorf("target %s: %s %s, want it failed on the link", tr.Target, tr.Status, tr.Error)
			}
			if got, _ := os.ReadFile(secret); string(got) != "mine\n" {
				t.Errorf("a file outside the output folder changed: %q", got)
			}
			if entries, _ := os.ReadDir(outside); len(entries) != 1 {
				t.Errorf("files written outside the output folder: %v", entries)
			}
		})
	}
}

// TestVersionStaysAString: --version 1.10 is the version "1.10" in the chart's values, not
// the number 1.1, and a version with a "#" or a newline is one string.
func TestVersionStaysAString(t *testing.T) {
	ex := newExample(t, true)
	w := ex.writer(t)
	for version, want := range map[string]string{"1.10": `VERSION: "1.10"`, "1.0 # x": `VERSION: "1.0 # x"`} {
		apply(t, w, ex.run(t, "dev", version))
		if cm := ex.gitops.Files(t, "dev")["performance-test/configmap-hello-world-config.yaml"]; !strings.Contains(cm, want) {
			t.Errorf("--version %q: config map lacks %s:\n%s", version, want, cm)
		}
	}
}
