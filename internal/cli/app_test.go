package cli_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fleetform/fleetform/internal/cli"
	"github.com/fleetform/fleetform/internal/testutil/gittest"
)

// appRepos are the hello-world example's repositories: the source and the config (Kalypso's
// shape: branches dev and stage) as git repositories, and an empty bare GitOps repository.
type appRepos struct {
	source, config, gitops *gittest.Repo
	sourceFiles, dev       map[string]string
}

func newAppRepos(t *testing.T, root string) *appRepos {
	t.Helper()
	ex := filepath.Join(gittest.ModuleRoot(t), "examples", "apps", "hello-world")
	r := &appRepos{}
	var err error
	for _, p := range []struct {
		repo **gittest.Repo
		dir  string
		bare bool
	}{{&r.source, "source", false}, {&r.config, "config", false}, {&r.gitops, "gitops.git", true}} {
		if *p.repo, err = gittest.InitRepo(filepath.Join(root, p.dir), p.bare); err != nil {
			t.Fatal(err)
		}
	}
	r.sourceFiles = gittest.ReadDir(t, filepath.Join(ex, "source"))
	r.source.Commit(t, "main", r.sourceFiles)
	r.dev = gittest.ReadDir(t, filepath.Join(ex, "config", "dev"))
	r.config.Commit(t, "dev", r.dev)
	r.config.Commit(t, "stage", gittest.ReadDir(t, filepath.Join(ex, "config", "stage")))
	return r
}

func (r *appRepos) args(cmd string, more ...string) []string {
	return append([]string{"app", cmd, "--source", r.source.Dir, "--config-repo", r.config.Dir,
		"--var", "IMAGE_NAME=ghcr.io/example/hello-world"}, more...)
}

func TestAppRenderApplyExplain(t *testing.T) {
	t.Setenv("FLEETFORM_CACHE_DIR", t.TempDir())
	r := newAppRepos(t, t.TempDir())
	out := t.TempDir()
	got := fleetform(t, 0, r.args("render", "--env", "dev", "--out", out, "--version", "1.4.2", "--image-tag", "1.4.2")...)
	mustContain(t, "render", got, `^render hello-world 1.4.2 in dev \(config: branch shape\)`, `performance-test/configmap-hello-world-config.yaml`)
	if _, err := os.Stat(filepath.Join(out, "functional-test", "deployment-hello-world.yaml")); err != nil {
		t.Error(err)
	}
	if _, err := os.Stat(filepath.Join(out, "uat-test")); err == nil {
		t.Error("render --env dev rendered stage's target")
	}

	got = fleetform(t, 0, r.args("apply", "--env", "dev", "--gitops", r.gitops.Dir, "--version", "1.4.2", "--image-tag", "1.4.2", "-o", "json")...)
	var res struct {
		NoChange bool `json:"noChange"`
		Branches []struct {
			Branch, Commit string
			Targets        []string
		} `json:"branches"`
	}
	if err := json.Unmarshal([]byte(got), &res); err != nil {
		t.Fatalf("%v\n%s", err, got)
	}
	if res.NoChange || len(res.Branches) != 1 || res.Branches[0].Branch != "dev" || len(res.Branches[0].Targets) != 2 {
		t.Fatalf("apply: %s", got)
	}
	mustContain(t, "second apply", fleetform(t, 0, r.args("apply", "--env", "dev", "--gitops", r.gitops.Dir, "--version", "1.4.2", "--image-tag", "1.4.2")...),
		`(?m)^  performance-test +unchanged +dev:performance-test/$`, `(?m)^no change$`)

	// The seeds' use case 3: performance-test's logging level from Debug to Info.
	r.dev["performance-test/values.yaml"] = strings.Replace(r.dev["performance-test/values.yaml"], "Debug", "Info", 1)
	r.config.Commit(t, "dev", r.dev)
	mustContain(t, "plan", fleetform(t, 0, r.args("plan", "--env", "dev", "--gitops", r.gitops.Dir, "--version", "1.4.2", "--image-tag", "1.4.2")...),
		`(?m)^  functional-test +unchanged`, `(?m)^    modify performance-test/configmap-hello-world-config.yaml$`)
	mustContain(t, "apply", fleetform(t, 0, r.args("apply", "--env", "dev", "--gitops", r.gitops.Dir, "--version", "1.4.2", "--image-tag", "1.4.2")...),
		`(?m)^committed [0-9a-f]{12} to dev \(\[performance-test\]\)$`)

	got = fleetform(t, 0, r.args("explain", "--target", "performance-test", "logging", "--version", "1.4.2", "--image-tag", "1.4.2", "-o", "json")...)
	var ex struct {
		Environment string `json:"environment"`
		Values      map[string]struct {
			Value  any `json:"value"`
			Source struct {
				Repo, File string
				Line       int
			} `json:"source"`
			Shadowed []struct {
				Value  any `json:"value"`
				Source struct {
					File string
					Line int
				} `json:"source"`
			} `json:"shadowed"`
		} `json:"values"`
	}
	if err := json.Unmarshal([]byte(got), &ex); err != nil {
		t.Fatalf("%v\n%s", err, got)
	}
	level, format := ex.Values["logging.level"], ex.Values["logging.format"]
	if ex.Environment != "dev" || level.Value != "Info" || level.Source.File != "performance-test/values.yaml" || level.Source.Line != 3 ||
		len(level.Shadowed) != 1 || level.Shadowed[0].Value != "Info" || level.Shadowed[0].Source.File != "helm/values.yaml" {
		t.Errorf("logging.level: %+v", level)
	}
	if format.Value != "text" || format.Source.File != "values.yaml" || format.Source.Line != 4 {
		t.Errorf("logging.format: %+v", format)
	}
	mustContain(t, "explain text", fleetform(t, 0, r.args("explain", "--target", "performance-test", "replicas", "--version", "1", "--image-tag", "1")...),
		`(?m)^replicas = 2\n    set in config performance-test/values.yaml:1\n    shadows 1 from source helm/values.yaml:5$`)
}

// TestAppKalypsoSample renders Kalypso's own sample application: its config folders are
// named performance-tests and functional-tests, its targets performance-test and
// functional-test; every mismatch is reported with a "did you mean", and exit code 1.
func TestAppKalypsoSample(t *testing.T) {
	fx := gittest.FixtureDir(t)
	root := t.TempDir()
	src, err := gittest.InitRepo(filepath.Join(root, "src"), false)
	if err != nil {
		t.Fatal(err)
	}
	src.Commit(t, "main", gittest.ReadDir(t, filepath.Join(fx, "app-src", "main")))
	cfg, err := gittest.InitRepo(filepath.Join(root, "cfg"), false)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Commit(t, "dev-configs", gittest.ReadDir(t, filepath.Join(fx, "app-src", "dev-configs")))
	var stdout, stderr strings.Builder
	code := cli.Main(t.Context(), []string{"app", "render", "--source", src.Dir, "--config-repo", cfg.Dir, "--env", "dev",
		"--out", filepath.Join(root, "out"), "--var", "IMAGE_NAME=ghcr.io/kalypso/hello", "--image-tag", "1", "--version", "1"}, nil, &stdout, &stderr)
	if code != cli.ExitFailed {
		t.Fatalf("exit %d\n%s\n%s", code, stdout.String(), stderr.String())
	}
	mustContain(t, "stderr", stderr.String(),
		`config folder performance-tests \(branch dev-configs\) matches no deployment target of environment dev in the workload: did you mean performance-test\?`,
		`deployment target functional-test of environment dev has no folder in the config repository \(branch dev-configs\): did you mean functional-tests`)
}

func TestAppUsage(t *testing.T) {
	fleetform(t, cli.ExitUsage, "app", "render", "--config-repo", "x", "--env", "dev")
	fleetform(t, cli.ExitUsage, "app", "render", "--env", "dev", "--out", "x")
	fleetform(t, cli.ExitUsage, "app", "apply", "--config-repo", "x", "--env", "dev", "--var", "NOEQUALS")
	fleetform(t, cli.ExitUsage, "app", "promote", "--config-repo", "x", "--from", "dev")
}
