package cli_test

import (
	"bytes"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"

	"github.com/fleetform/fleetform/internal/cli"
	"github.com/fleetform/fleetform/internal/testutil/gittest"
)

// hostileDir holds the hostile control-plane corpus, at the repository's root.
var hostileDir = filepath.Join("..", "..", "testdata", "hostile", "control-plane")

// hostileControlPlane is the fixture's control plane (folder layout): environment dev, cluster
// types east and west, every target on every cluster type, workload shop with target web.
var hostileControlPlane = map[string]string{
	"environments/dev/environment.yaml": `apiVersion: scheduler.kalypso.io/v1alpha1
kind: Environment
metadata: {name: dev}
spec:
  controlPlane: {repo: https://example.com/cp, branch: main, path: .}
`,
	"environments/dev/types.yaml": `apiVersion: scheduler.kalypso.io/v1alpha1
kind: ClusterType
metadata: {name: west, labels: {region: west}}
spec: {reconciler: builtin/flux, namespaceService: builtin/namespace, configType: builtin/configmap}
---
apiVersion: scheduler.kalypso.io/v1alpha1
kind: ClusterType
metadata: {name: east, labels: {region: east}}
spec: {reconciler: builtin/flux, namespaceService: builtin/namespace, configType: builtin/configmap}
---
apiVersion: scheduler.kalypso.io/v1alpha1
kind: SchedulingPolicy
metadata: {name: all}
spec:
  deploymentTargetSelector: {labelSelector: {}}
  clusterTypeSelector: {labelSelector: {}}
`,
	"environments/dev/dev.yaml": `apiVersion: v1
kind: ConfigMap
metadata: {name: dev-config, labels: {platform-config: "true"}}
data: {LOG_LEVEL: info}
`,
	"shop.yaml": `apiVersion: scheduler.kalypso.io/v1alpha1
kind: Workload
metadata: {name: shop, labels: {workspace: retail}}
spec:
  deploymentTargets:
    - {name: web, environment: dev, manifests: {repo: https://example.com/shop, branch: main, path: ./web}}
`,
}

// hostileApp is the fixture's application source (a folder): workload web with target edge
// in dev (manifests.path edge), a chart whose config map holds the version; hostileConfig is
// its config repository (a folder).
var hostileApp = map[string]string{
	"workload.yaml": `apiVersion: scheduler.kalypso.io/v1alpha1
kind: Workload
metadata: {name: web}
spec:
  deploymentTargets:
    - {name: edge, environment: dev, manifests: {repo: https://example.com/gitops, branch: dev, path: edge}}
`,
	"fleetform-app.yaml":     "chart: helm\n",
	"helm/Chart.yaml":        "apiVersion: v2\nname: web\nversion: 0.1.0\n",
	"helm/values.yaml":       "version: $VERSION\n",
	"helm/templates/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: web}\ndata:\n  VERSION: {{ .Values.version | quote }}\n",
}

var hostileConfig = map[string]string{"dev/edge/values.yaml": "logLevel: info\n"}

// hostileOutside is what the fixture keeps outside the control plane, the GitOps
// repository and --out: no command may change it.
var hostileOutside = map[string]string{"file": "precious\n", "dir/file": "precious\n"}

// TestHostileControlPlane runs the corpus of testdata/hostile/control-plane (see its
// README): each file is a control plane (or an output folder) built to make fleetform write
// where it must not, the commands to run on it, and what each must answer. After each
// command, nothing outside was touched, the GitOps repository's branch dev did not move and
// passes git fsck --strict, and a command that failed left --out as it was.
func TestHostileControlPlane(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(hostileDir, "*.txtar"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no cases in %s: %v", hostileDir, err)
	}
	for _, file := range files {
		c := readHostileControlPlaneCase(t, file)
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txtar"), func(t *testing.T) {
			t.Parallel()
			c.run(t)
		})
	}
}

// hostileCPCase is one file of the corpus.
type hostileCPCase struct {
	file  string
	cp    map[string]string // control-plane files added or replaced
	app   map[string]string // application source files added or replaced
	out   map[string]string // files in --out before the commands
	links [][2]string       // link (under the work folder) -> target
	steps []hostileStep
}

// hostileStep is one command and what it must answer.
type hostileStep struct {
	args   string
	exit   int
	stderr []string
	stdout []string
	files  [][2]string // path, text the file must contain
	lacks  []string    // text neither stdout nor stderr may contain
}

func readHostileControlPlaneCase(t *testing.T, file string) *hostileCPCase {
	t.Helper()
	ar, err := txtar.ParseFile(file)
	if err != nil {
		t.Fatal(err)
	}
	c := &hostileCPCase{file: file, cp: map[string]string{}, app: map[string]string{}, out: map[string]string{}}
	for _, f := range ar.Files {
		switch name := f.Name; {
		case strings.HasPrefix(name, "cp/"):
			c.cp[strings.TrimPrefix(name, "cp/")] = string(f.Data)
		case strings.HasPrefix(name, "app/"):
			c.app[strings.TrimPrefix(name, "app/")] = string(f.Data)
		case strings.HasPrefix(name, "out/"):
			c.out[strings.TrimPrefix(name, "out/")] = string(f.Data)
		case name == "links":
			for line := range strings.Lines(strings.TrimSpace(string(f.Data))) {
				link, target, ok := strings.Cut(strings.TrimSpace(line), " -> ")
				if !ok {
					t.Fatalf("%s: links: %q: want LINK -> TARGET", file, line)
				}
				c.links = append(c.links, [2]string{link, target})
			}
		case name == "run":
			c.steps = append(c.steps, hostileStep{args: strings.TrimSpace(string(f.Data))})
		case name == "want":
			if len(c.steps) == 0 || c.steps[len(c.steps)-1].stderr != nil {
				t.Fatalf("%s: want without its run", file)
			}
			if err := c.steps[len(c.steps)-1].parseWant(string(f.Data)); err != nil {
				t.Fatalf("%s: want: %v", file, err)
			}
		default:
			t.Fatalf("%s: unknown section %q (want cp/..., app/..., out/..., links, run and want)", file, name)
		}
	}
	if len(c.steps) == 0 {
		t.Fatalf("%s: a case needs a run and its want", file)
	}
	return c
}

// parseWant reads "exit: N" and any number of "stderr: TEXT", "stdout: TEXT" and
// "file: PATH: TEXT" lines, and "lacks: TEXT" (in neither stdout nor stderr).
func (s *hostileStep) parseWant(text string) error {
	s.stderr = []string{}
	for line := range strings.Lines(strings.TrimSpace(text)) {
		key, value, ok := strings.Cut(strings.TrimSpace(line), ":")
		value = strings.TrimSpace(value)
		switch {
		case !ok:
			return fmt.Errorf("line %q: want KEY: VALUE", line)
		case key == "exit":
			n, err := strconv.Atoi(value)
			if err != nil {
				return err
			}
			s.exit = n
		case key == "stderr":
			s.stderr = append(s.stderr, value)
		case key == "stdout":
			s.stdout = append(s.stdout, value)
		case key == "lacks":
			s.lacks = append(s.lacks, value)
		case key == "file":
			path, text, ok := strings.Cut(value, ": ")
			if !ok {
				return fmt.Errorf("line %q: want file: PATH: TEXT", line)
			}
			s.files = append(s.files, [2]string{path, text})
		default:
			return fmt.Errorf("unknown key %q", key)
		}
	}
	return nil
}

func (c *hostileCPCase) run(t *testing.T) {
	t.Helper()
	work := t.TempDir()
	vars := map[string]string{
		"$CP": filepath.Join(work, "cp"), "$OUT": filepath.Join(work, "out"),
		"$OUTSIDE": filepath.Join(work, "outside"), "$GITOPS": filepath.Join(work, "gitops.git"),
		"$APP": filepath.Join(work, "app"), "$CONFIG": filepath.Join(work, "config"),
	}
	expand := func(s string) string {
		for _, k := range []string{"$OUTSIDE", "$OUT", "$CP", "$GITOPS", "$APP", "$CONFIG"} { // $OUTSIDE before $OUT
			s = strings.ReplaceAll(s, k, vars[k])
		}
		return s
	}
	cp := maps.Clone(hostileControlPlane)
	for p, content := range c.cp {
		cp[p] = expand(content)
	}
	writeTree(t, vars["$CP"], cp)
	app := maps.Clone(hostileApp)
	for p, content := range c.app {
		app[p] = expand(content)
	}
	writeTree(t, vars["$APP"], app)
	writeTree(t, vars["$CONFIG"], hostileConfig)
	if err := os.MkdirAll(vars["$OUT"], 0o755); err != nil {
		t.Fatal(err)
	}
	writeTree(t, vars["$OUT"], c.out)
	writeTree(t, vars["$OUTSIDE"], hostileOutside)
	for _, l := range c.links {
		symlink(t, expand(l[1]), filepath.Join(work, filepath.FromSlash(l[0])))
	}
	repo, err := gittest.InitRepo(vars["$GITOPS"], true)
	if err != nil {
		t.Fatal(err)
	}
	tip := repo.Checked(t).Commit(t, "dev", map[string]string{"README.md": "the GitOps repository\n"})
	for _, s := range c.steps {
		before := outTree(t, vars["$OUT"])
		var stdout, stderr bytes.Buffer
		code := cli.Main(t.Context(), strings.Fields(expand(s.args)), nil, &stdout, &stderr)
		if code != s.exit {
			t.Errorf("%s: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", s.args, code, s.exit, stdout.String(), stderr.String())
		}
		for _, want := range s.stderr {
			if !strings.Contains(stderr.String(), expand(want)) {
				t.Errorf("%s: stderr does not contain %q:\n%s", s.args, expand(want), stderr.String())
			}
		}
		for _, want := range s.stdout {
			if !strings.Contains(stdout.String(), expand(want)) {
				t.Errorf("%s: stdout does not contain %q:\n%s", s.args, expand(want), stdout.String())
			}
		}
		for _, text := range s.lacks {
			if strings.Contains(stdout.String()+stderr.String(), expand(text)) {
				t.Errorf("%s: the output shows %q:\nstdout:\n%s\nstderr:\n%s", s.args, expand(text), stdout.String(), stderr.String())
			}
		}
		for _, f := range s.files {
			if data, err := os.ReadFile(expand(f[0])); err != nil || !strings.Contains(string(data), f[1]) {
				t.Errorf("%s: %s does not contain %q (%v):\n%s", s.args, expand(f[0]), f[1], err, data)
			}
		}
		if got := gittest.ReadDir(t, vars["$OUTSIDE"]); !maps.Equal(got, hostileOutside) {
			t.Errorf("%s: changed what is outside: %v", s.args, got)
		}
		if got := repo.Tip(t, "dev"); got != tip {
			t.Errorf("%s: moved the GitOps branch dev to %s", s.args, got)
		}
		if after := outTree(t, vars["$OUT"]); code != cli.ExitOK && !maps.Equal(after, before) {
			t.Errorf("%s failed, and changed --out:\nbefore %v\nafter  %v", s.args, before, after)
		}
	}
}

// outTree describes what is in dir: files with their content, links with their target.
func outTree(t *testing.T, dir string) map[string]string {
	t.Helper()
	tree := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		switch {
		case d.Type()&os.ModeSymlink != 0:
			target, err := os.Readlink(p)
			tree[rel] = "-> " + target
			return err
		case d.Type().IsRegular():
			data, err := os.ReadFile(p)
			tree[rel] = string(data)
			return err
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return tree
}
