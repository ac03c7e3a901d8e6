package deploy_test

import (
	"bytes"
	"context"
	"debug/elf"
	"encoding/json"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"
)

// instruction is one Dockerfile instruction, its continuation lines joined.
type instruction struct {
	line int    // where it starts
	cmd  string // FROM, RUN, ... (upper case)
	args string
}

// stage is one FROM of a Dockerfile and what follows it.
type stage struct {
	from, name string // the image (build arguments expanded) and its AS name
	instrs     []instruction
}

// parseDockerfile reads the instructions of a Dockerfile: comments and blank lines
// dropped, lines ending in a backslash joined with the next.
func parseDockerfile(t *testing.T, data []byte) []instruction {
	t.Helper()
	var out []instruction
	var cur *instruction
	for i, line := range strings.Split(string(data), "\n") {
		trimmed := strings.TrimSpace(line)
		if trimmed == "" || strings.HasPrefix(trimmed, "#") {
			continue
		}
		cont := strings.HasSuffix(trimmed, `\`)
		trimmed = strings.TrimSpace(strings.TrimSuffix(trimmed, `\`))
		if cur == nil {
			cmd, args, _ := strings.Cut(trimmed, " ")
			cur = &instruction{line: i + 1, cmd: strings.ToUpper(cmd), args: strings.TrimSpace(args)}
		} else {
			cur.args += " " + trimmed
		}
		if !cont {
			out = append(out, *cur)
			cur = nil
		}
	}
	if cur != nil {
		t.Fatalf("Dockerfile:%d: the last instruction ends with a backslash", cur.line)
	}
	return out
}

// stages splits a Dockerfile into its stages, with the global ARG defaults expanded in FROM.
func stages(t *testing.T, instrs []instruction) []stage {
	t.Helper()
	globals := map[string]string{"BUILDPLATFORM": "linux/amd64"}
	var out []stage
	for _, in := range instrs {
		switch {
		case in.cmd == "FROM":
			fields := strings.Fields(in.args)
			var s stage
			for i := 0; i < len(fields); i++ {
				switch {
				case strings.HasPrefix(fields[i], "--"):
				case strings.EqualFold(fields[i], "AS") && i+1 < len(fields):
					s.name = fields[i+1]
					i++
				default:
					s.from = shellWords(t, fields[i], globals)[0]
				}
			}
			out = append(out, s)
		case len(out) == 0 && in.cmd == "ARG":
			name, value, _ := strings.Cut(in.args, "=")
			globals[name] = value
		case len(out) == 0:
			t.Fatalf("Dockerfile:%d: %s before the first FROM", in.line, in.cmd)
		default:
			out[len(out)-1].instrs = append(out[len(out)-1].instrs, in)
		}
	}
	return out
}

// shellWords splits a shell command line into words as sh would: double quotes group and
// expand ${NAME} and $NAME from vars, single quotes group. An unknown variable fails.
func shellWords(t *testing.T, s string, vars map[string]string) []string {
	t.Helper()
	expand := func(v string) string {
		return os.Expand(v, func(name string) string {
			value, ok := vars[name]
			if !ok {
				t.Fatalf("%q: unknown variable $%s", s, name)
			}
			return value
		})
	}
	var words []string
	var word strings.Builder
	inWord := false
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case ' ', '\t':
			if inWord {
				words = append(words, word.String())
				word.Reset()
				inWord = false
			}
		case '"', '\'':
			end := strings.IndexByte(s[i+1:], c)
			if end < 0 {
				t.Fatalf("%q: unterminated quote", s)
			}
			quoted := s[i+1 : i+1+end]
			if c == '"' {
				quoted = expand(quoted)
			}
			word.WriteString(quoted)
			inWord = true
			i += end + 1
		default:
			j := i
			for j < len(s) && !strings.ContainsRune(" \t\"'", rune(s[j])) {
				j++
			}
			word.WriteString(expand(s[i:j]))
			inWord = true
			i = j - 1
		}
	}
	if inWord {
		words = append(words, word.String())
	}
	return words
}

// execForm decodes the JSON (exec) form of CMD, ENTRYPOINT and HEALTHCHECK CMD.
func execForm(t *testing.T, in instruction, args string) []string {
	t.Helper()
	var out []string
	if err := json.Unmarshal([]byte(args), &out); err != nil {
		t.Fatalf("Dockerfile:%d: %s %s: want the exec form, a JSON array: %v", in.line, in.cmd, args, err)
	}
	return out
}

// last returns the last instruction of a stage with that command, or nil.
func (s stage) last(cmd string) *instruction {
	for i := len(s.instrs) - 1; i >= 0; i-- {
		if s.instrs[i].cmd == cmd {
			return &s.instrs[i]
		}
	}
	return nil
}

// buildRun returns the RUN instruction of the build stage that runs go build.
func buildRun(t *testing.T, s stage) instruction {
	t.Helper()
	var found []instruction
	for _, in := range s.instrs {
		if in.cmd == "RUN" && strings.Contains(in.args, "go build") {
			found = append(found, in)
		}
	}
	if len(found) != 1 {
		t.Fatalf("the build stage has %d RUN instructions with go build, want 1", len(found))
	}
	return found[0]
}

func readDockerfile(t *testing.T) []stage {
	t.Helper()
	ss := stages(t, parseDockerfile(t, readRepoFile(t, "Dockerfile")))
	if len(ss) < 2 {
		t.Fatalf("the Dockerfile has %d stage(s): want a build stage and a runtime stage", len(ss))
	}
	return ss
}

// imageUID is the user the image runs as, which the chart's pods run as too.
const imageUID = 65532

func TestDockerfile(t *testing.T) {
	ss := readDockerfile(t)
	build, final := ss[0], ss[len(ss)-1]
	for _, s := range ss {
		if ref := s.from; !strings.Contains(path.Base(ref), ":") || strings.HasSuffix(ref, ":latest") {
			t.Errorf("FROM %s: pin the base image to a version tag", ref)
		}
		for _, in := range s.instrs {
			if in.cmd == "ADD" {
				t.Errorf("Dockerfile:%d: ADD %s: use COPY (ADD fetches URLs and unpacks archives)", in.line, in.args)
			}
		}
	}
	if build.name == "" || !strings.HasPrefix(build.from, "golang:") {
		t.Errorf("the first stage (FROM %s AS %s) must be a named golang build stage", build.from, build.name)
	}
	if strings.HasPrefix(final.from, "golang:") {
		t.Errorf("the runtime stage (FROM %s) must not carry the Go toolchain", final.from)
	}

	copied := false
	for _, in := range final.instrs {
		if in.cmd == "COPY" && strings.Contains(in.args, "--from="+build.name+" ") && strings.Contains(in.args, "/fleetform") {
			copied = true
		}
	}
	if !copied {
		t.Errorf("the runtime stage does not COPY --from=%s the fleetform binary", build.name)
	}

	run := buildRun(t, build)
	for _, want := range []string{"CGO_ENABLED=0 ", "-trimpath", `-ldflags "-s -w `, "-X github.com/fleetform/fleetform/internal/cli.version=${VERSION}", "./cmd/fleetform"} {
		if !strings.Contains(run.args, want) {
			t.Errorf("Dockerfile:%d: the build does not have %q: %s", run.line, want, run.args)
		}
	}

	gitInstalled := false
	for _, in := range final.instrs {
		if in.cmd == "RUN" && slices.Contains(strings.Fields(in.args), "git") && strings.Contains(in.args, "apk add") {
			gitInstalled = true
		}
	}
	if !gitInstalled {
		t.Error("the runtime stage does not install git (apk add git): fleetform writes with the git CLI")
	}

	checkRuntimeStage(t, final)
}

// checkRuntimeStage checks how the image runs: as a non-root UID, fleetform serve on 8080
// with /data as its volume, with a health check.
func checkRuntimeStage(t *testing.T, final stage) {
	t.Helper()
	user := final.last("USER")
	if user == nil {
		t.Fatal("the runtime stage has no USER: it would run as root")
	}
	uid, _, _ := strings.Cut(user.args, ":")
	if uid != strconv.Itoa(imageUID) {
		t.Errorf("USER %s: want the numeric non-root UID %d (Kubernetes' runAsNonRoot can check a number, not a name)", user.args, imageUID)
	}
	if expose := final.last("EXPOSE"); expose == nil || !slices.Contains(strings.Fields(expose.args), "8080") {
		t.Error("the runtime stage does not EXPOSE 8080")
	}
	if volume := final.last("VOLUME"); volume == nil || !slices.Equal(execForm(t, *volume, volume.args), []string{"/data"}) {
		t.Error(`the runtime stage does not declare VOLUME ["/data"]`)
	}
	entrypoint := final.last("ENTRYPOINT")
	if entrypoint == nil {
		t.Fatal("no ENTRYPOINT")
	}
	if ep := execForm(t, *entrypoint, entrypoint.args); path.Base(ep[len(ep)-1]) != "fleetform" {
		t.Errorf("ENTRYPOINT %v: want it to end with the fleetform binary", ep)
	}
	cmd := final.last("CMD")
	if cmd == nil {
		t.Fatal("no CMD")
	}
	if got, want := execForm(t, *cmd, cmd.args), []string{"serve", "--addr", "0.0.0.0:8080", "--data-dir", "/data"}; !slices.Equal(got, want) {
		t.Errorf("CMD %q, want %q", got, want)
	}
	health := final.last("HEALTHCHECK")
	if health == nil {
		t.Fatal("no HEALTHCHECK")
	}
	_, check, ok := strings.Cut(health.args, "CMD ")
	if !ok || !slices.Contains(execForm(t, *health, check), "http://127.0.0.1:8080/healthz") {
		t.Errorf("Dockerfile:%d: HEALTHCHECK %s: want a check of http://127.0.0.1:8080/healthz", health.line, health.args)
	}
}

// dockerfileCMD returns the CMD of the image: the arguments of fleetform by default.
func dockerfileCMD(t *testing.T) []string {
	t.Helper()
	ss := readDockerfile(t)
	cmd := ss[len(ss)-1].last("CMD")
	if cmd == nil {
		t.Fatal("no CMD")
	}
	return execForm(t, *cmd, cmd.args)
}

// slowTestsEnv runs the tests that build fleetform from scratch with the toolchain, which
// take minutes on a busy machine; CI sets it (.ci/run), `make test` on a workstation skips
// them. slowTestTimeout bounds each: past it, the test fails rather than the run's.
const (
	slowTestsEnv    = "FLEETFORM_SLOW_TESTS"
	slowTestTimeout = 20 * time.Minute
)

// TestDockerBuildIsStatic runs the Dockerfile's go build command here, for this machine's
// platform, and checks what it makes: a static, stripped binary without local paths that
// reports the version it was given.
func TestDockerBuildIsStatic(t *testing.T) {
	if os.Getenv(slowTestsEnv) == "" {
		t.Skipf("builds fleetform from scratch (minutes on a busy machine): set %s=1 to run it (CI does)", slowTestsEnv)
	}
	if runtime.GOOS != "linux" {
		t.Skipf("checks an ELF binary; this is %s", runtime.GOOS)
	}
	const version = "v0.0.0-dockertest"
	run := buildRun(t, readDockerfile(t)[0])
	words := shellWords(t, run.args, map[string]string{"VERSION": version, "TARGETOS": runtime.GOOS, "TARGETARCH": runtime.GOARCH})
	var env []string
	for len(words) > 0 && regexp.MustCompile(`^[A-Z_][A-Z0-9_]*=`).MatchString(words[0]) {
		env, words = append(env, words[0]), words[1:]
	}
	if !slices.Contains(env, "CGO_ENABLED=0") || len(words) < 2 || words[0] != "go" || words[1] != "build" {
		t.Fatalf("Dockerfile:%d: want CGO_ENABLED=0 ... go build ...: %q", run.line, words)
	}
	bin := filepath.Join(t.TempDir(), "fleetform")
	o := slices.Index(words, "-o")
	if o < 0 || o+1 >= len(words) {
		t.Fatalf("Dockerfile:%d: the build names no output (-o)", run.line)
	}
	words[o+1] = bin
	root := repoPath(t)
	ctx, cancel := context.WithTimeout(t.Context(), slowTestTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", words[1:]...) //nolint:gosec // the Dockerfile's own build command
	cmd.Dir = root
	cmd.Env = append(os.Environ(), env...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go %s: %v\n%s", strings.Join(words[1:], " "), err, out)
	}

	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP || p.Type == elf.PT_DYNAMIC {
			t.Errorf("the binary is dynamically linked (%s program header): it needs a libc the runtime image may not have", p.Type)
		}
	}
	if libs, err := f.ImportedLibraries(); err != nil || len(libs) > 0 {
		t.Errorf("the binary imports shared libraries %v (%v)", libs, err)
	}
	if f.Section(".symtab") != nil {
		t.Error("the binary has a symbol table: -ldflags -s did not apply")
	}
	data, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(data, []byte(root+string(filepath.Separator))) {
		t.Errorf("the binary holds the build machine's path %s: -trimpath did not apply", root)
	}
	out, err := exec.CommandContext(t.Context(), bin, "version").Output()
	if err != nil || string(out) != "fleetform "+version+"\n" {
		t.Errorf("fleetform version printed %q (%v), want %q: the -X of the version does not reach it", out, err, "fleetform "+version+"\n")
	}
}

// ignoreRule is one line of a .dockerignore.
type ignoreRule struct {
	re     *regexp.Regexp
	negate bool
}

// readDockerignore compiles a .dockerignore with Docker's rules: patterns are cleaned
// slash paths, * and ? do not cross a slash, ** matches any number of folders, ! lets a
// path back in, and the last matching line wins.
func readDockerignore(t *testing.T) []ignoreRule {
	t.Helper()
	var rules []ignoreRule
	for _, line := range strings.Split(string(readRepoFile(t, ".dockerignore")), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		negate := strings.HasPrefix(line, "!")
		pattern := strings.TrimPrefix(path.Clean(strings.TrimPrefix(line, "!")), "/")
		var re strings.Builder
		re.WriteString("^")
		for i := 0; i < len(pattern); i++ {
			switch {
			case strings.HasPrefix(pattern[i:], "**/"):
				re.WriteString("(.*/)?")
				i += 2
			case strings.HasPrefix(pattern[i:], "**"):
				re.WriteString(".*")
				i++
			case pattern[i] == '*':
				re.WriteString("[^/]*")
			case pattern[i] == '?':
				re.WriteString("[^/]")
			default:
				re.WriteString(regexp.QuoteMeta(pattern[i : i+1]))
			}
		}
		re.WriteString("$")
		rules = append(rules, ignoreRule{regexp.MustCompile(re.String()), negate})
	}
	return rules
}

// ignored says whether the build context leaves out a slash path: a rule applies to a path
// when it matches the path or one of its parent folders.
func ignored(rules []ignoreRule, p string) bool {
	out := false
	for _, r := range rules {
		for q := p; q != "." && q != "/"; q = path.Dir(q) {
			if r.re.MatchString(q) {
				out = !r.negate
				break
			}
		}
	}
	return out
}

// TestDockerignoreKeepsWhatTheBuildReads: the build context has every file go build reads
// (the sources and embedded files of the packages of ./cmd/fleetform) and leaves out git,
// docs, deployment files and local state.
func TestDockerignoreKeepsWhatTheBuildReads(t *testing.T) {
	root := repoPath(t)
	cmd := exec.CommandContext(t.Context(), "go", "list", "-deps", "-json=Dir,GoFiles,EmbedFiles,Module", "./cmd/fleetform")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	needed := []string{"go.mod", "go.sum"}
	dec := json.NewDecoder(bytes.NewReader(out))
	for dec.More() {
		var pkg struct {
			Dir                 string
			GoFiles, EmbedFiles []string
			Module              *struct{ Main bool }
		}
		if err := dec.Decode(&pkg); err != nil {
			t.Fatal(err)
		}
		if pkg.Module == nil || !pkg.Module.Main {
			continue
		}
		rel, err := filepath.Rel(root, pkg.Dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range append(pkg.GoFiles, pkg.EmbedFiles...) {
			needed = append(needed, filepath.ToSlash(filepath.Join(rel, f)))
		}
	}
	if len(needed) < 20 {
		t.Fatalf("go list found only %v", needed)
	}
	rules := readDockerignore(t)
	for _, p := range needed {
		if ignored(rules, p) {
			t.Errorf(".dockerignore leaves out %s, which the build reads", p)
		}
	}
	for _, p := range []string{".git/config", ".demo/hub.db", ".cache/x", "bin/fleetform", "docs/hub.md", "deploy/helm/fleetform/values.yaml",
		"Dockerfile", "internal/render/testdata/x.yaml", "internal/cli/cli_test.go"} {
		if !ignored(rules, p) {
			t.Errorf(".dockerignore lets %s into the build context", p)
		}
	}
	if !ignored(rules, "fleetform.env") || ignored(rules, "cmd/fleetform/main.go") {
		t.Error("the .dockerignore rules do not apply as Docker applies them")
	}
}

// TestImageUserMatchesChart: the chart runs the pods as the image's user.
func TestImageUserMatchesChart(t *testing.T) {
	var values struct {
		PodSecurityContext struct {
			RunAsUser  int `json:"runAsUser"`
			RunAsGroup int `json:"runAsGroup"`
		} `json:"podSecurityContext"`
	}
	if err := yaml.Unmarshal(readRepoFile(t, "deploy", "helm", "fleetform", "values.yaml"), &values); err != nil {
		t.Fatal(err)
	}
	if values.PodSecurityContext.RunAsUser != imageUID || values.PodSecurityContext.RunAsGroup != imageUID {
		t.Errorf("the chart runs as %d:%d, the image as %d:%d", values.PodSecurityContext.RunAsUser, values.PodSecurityContext.RunAsGroup, imageUID, imageUID)
	}
}
