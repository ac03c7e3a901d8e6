package cli_test

import (
	"bufio"
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fleetform/fleetform/internal/cli"
	"github.com/fleetform/fleetform/internal/dev/fleetgen"
	"github.com/fleetform/fleetform/internal/hub"
	"github.com/fleetform/fleetform/internal/hub/client"
	"github.com/fleetform/fleetform/internal/testutil/gittest"
)

// serveWait bounds how long the test waits for serve to do what it was asked (it answers
// in well under a second here; this only keeps a broken serve from hanging the test).
const serveWait = 30 * time.Second

// served is a running `fleetform serve` process.
type served struct {
	cmd    *exec.Cmd
	url    string
	client *client.Client
	log    *bytes.Buffer
}

// startServe runs fleetform serve with args and waits until it is ready.
func startServe(t *testing.T, env []string, args ...string) *served {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), "fleetform", append([]string{"serve", "--addr", "127.0.0.1:0", "--data-dir", t.TempDir()}, args...)...)
	cmd.Env = append(cmd.Environ(), env...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s := &served{cmd: cmd, log: &bytes.Buffer{}}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	lines := bufio.NewScanner(stderr)
	serving := regexp.MustCompile(`serving (http://\S+)`)
	for lines.Scan() {
		s.log.WriteString(lines.Text() + "\n")
		if m := serving.FindStringSubmatch(lines.Text()); m != nil {
			s.url = m[1]
			break
		}
	}
	go func() { _, _ = io.Copy(s.log, stderr) }()
	if s.url == "" {
		t.Fatalf("serve did not start:\n%s", s.log)
	}
	if s.client, err = client.New(s.url, "admin-token", nil); err != nil {
		t.Fatal(err)
	}
	s.until(t, "ready", func() bool {
		resp, err := http.Get(s.url + "/readyz") //nolint:noctx // a test's probe
		if err != nil {
			return false
		}
		_ = resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
	return s
}

// until waits for cond, which the running service makes true by itself: the test observes
// another process, which has no way to tell it (a bounded wait for an outcome, not a retry
// of an assertion).
func (s *served) until(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(serveWait)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("serve: not %s after %s\n%s", what, serveWait, s.log)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (s *served) sync(t *testing.T, env string) hub.SyncRecord {
	t.Helper()
	rec, err := s.client.LatestSync(t.Context(), env)
	if err != nil && !errors.Is(err, hub.ErrNotFound) {
		t.Fatal(err)
	}
	return rec
}

// TestServeEndToEnd: serve applies every environment at the start; a push and its GitHub
// webhook make it apply the environment the change reaches at once (the poll interval is an
// hour); the sources and syncs are on the API; a forged webhook is refused; SIGTERM stops it.
func TestServeEndToEnd(t *testing.T) {
	const cpURL = "https://github.com/example-org/platform"
	cp, gitopsRepo := gittest.NewBare(t), gittest.NewBare(t).Checked(t)
	files := serveControlPlane(gitopsRepo.Dir)
	cp.Commit(t, "main", files)
	s := startServe(t, []string{"FLEETFORM_HUB_ADMIN_TOKEN=admin-token", "FLEETFORM_WEBHOOK_SECRET=hook-secret"},
		"--control-plane", cpURL, "--repo-map", cpURL+"="+cp.Dir, "--interval", "1h")
	start := s.sync(t, "dev")
	if start.Trigger != hub.TriggerStart || start.GitOpsCommit != gitopsRepo.Tip(t, "dev").String() {
		t.Fatalf("dev's first sync %+v, want the start's commit on dev", start)
	}

	// A forged webhook is refused and changes nothing.
	body := []byte(`{"ref":"refs/heads/main","repository":{"clone_url":"` + cpURL + `.git","html_url":"` + cpURL + `"}}`)
	if code := postWebhook(t, s.url, body, "wrong-secret"); code != http.StatusUnauthorized {
		t.Errorf("forged webhook: %d, want 401", code)
	}

	changed := maps.Clone(files)
	changed["environments/dev/config.yaml"] = strings.Replace(files["environments/dev/config.yaml"], "info", "debug", 1)
	cp.Commit(t, "main", changed)
	pushed := time.Now()
	if code := postWebhook(t, s.url, body, "hook-secret"); code != http.StatusAccepted {
		t.Fatalf("webhook: %d, want 202", code)
	}
	s.until(t, "synced after the webhook", func() bool { return s.sync(t, "dev").Trigger == hub.TriggerWebhook })
	t.Logf("webhook to GitOps commit: %s", time.Since(pushed))
	rec := s.sync(t, "dev")
	if rec.GitOpsCommit == "" || rec.GitOpsCommit != gitopsRepo.Tip(t, "dev").String() || rec.GitOpsCommit == start.GitOpsCommit {
		t.Errorf("dev after the webhook: %+v; want a new commit, the branch's tip", rec)
	}
	if p := s.sync(t, "prod"); p.Trigger != hub.TriggerStart {
		t.Errorf("prod was synced (%s) by a change in environments/dev/", p.Trigger)
	}
	sources, err := s.client.Sources(t.Context())
	if err != nil || len(sources) != 1 || sources[0].URL != cpURL || sources[0].LastCommit != cp.Tip(t, "main").String() {
		t.Errorf("sources %+v (%v), want the control plane at its tip", sources, err)
	}

	t.Setenv("FLEETFORM_HUB_TOKEN", "admin-token")
	mustContain(t, "sync", fleetform(t, cli.ExitOK, "sync", "--hub", s.url, "--env", "dev"),
		`^dev, webhook at \S+ \([0-9a-f]{12}, \d+ ms\): committed [0-9a-f]{12} to dev`, `files changed: [1-9]`)
	mustContain(t, "sources", fleetform(t, cli.ExitOK, "sources", "--hub", s.url),
		`control-plane +`+regexp.QuoteMeta(cpURL)+` +- +[0-9a-f]{12} +\S+ +0 +-`)

	// The web UI on the same port: the environments in the chain's order, the explain pages
	// read the control plane.
	for path, want := range map[string]string{"/": `data-env="dev"`, "/explain?env=dev&target=nothing": "nothing",
		"/environments/dev": "Last sync"} {
		status, header, page := getPage(t, s.url+path, "admin-token")
		if !strings.Contains(page, want) || !strings.HasPrefix(header.Get("Content-Type"), "text/html") {
			t.Errorf("GET %s on serve: %d, lacks %q", path, status, want)
		}
	}

	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := s.cmd.Wait(); err != nil {
		t.Errorf("serve stopped with %v, want exit 0\n%s", err, s.log)
	}
}

// getPage GETs url with a bearer token and returns the response's status, headers and body.
func getPage(t *testing.T, url, token string) (int, http.Header, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	return resp.StatusCode, resp.Header, string(page)
}

func postWebhook(t *testing.T, base string, body []byte, secret string) int {
	t.Helper()
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write(body)
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, base+"/api/v1/webhooks/git", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("X-Hub-Signature-256", "sha256="+hex.EncodeToString(mac.Sum(nil)))
	req.Header.Set("X-GitHub-Event", "push")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	return resp.StatusCode
}

// serveControlPlane is a folder-layout control plane: dev and prod, each applied into
// gitops on its own branch.
func serveControlPlane(gitops string) map[string]string {
	files := map[string]string{"shop.yaml": `apiVersion: scheduler.kalypso.io/v1alpha1
kind: Workload
metadata: {name: shop, labels: {workspace: retail}}
spec:
  deploymentTargets:
    - {name: web, environment: dev, manifests: {repo: https://example.com/shop, branch: dev, path: ./web}}
    - {name: web, environment: prod, manifests: {repo: https://example.com/shop, branch: prod, path: ./web}}
`}
	for _, env := range []string{"dev", "prod"} {
		files["environments/"+env+"/env.yaml"] = fmt.Sprintf(`apiVersion: scheduler.kalypso.io/v1alpha1
kind: Environment
metadata: {name: %[1]s}
spec:
  controlPlane: {repo: https://github.com/example-org/platform, branch: main, path: .}
---
apiVersion: scheduler.kalypso.io/v1alpha1
kind: ClusterType
metadata: {name: large}
spec: {reconciler: builtin/flux, namespaceService: builtin/namespace, configType: builtin/configmap}
---
apiVersion: scheduler.kalypso.io/v1alpha1
kind: SchedulingPolicy
metadata: {name: all}
spec:
  deploymentTargetSelector: {labelSelector: {}}
  clusterTypeSelector: {labelSelector: {}}
---
apiVersion: scheduler.kalypso.io/v1alpha1
kind: GitOpsRepo
metadata: {name: %[1]s}
spec: {repo: %[2]s, branch: %[1]s, path: .}
`, env, gitops)
		files["environments/"+env+"/config.yaml"] = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: " + env + "-config, labels: {platform-config: \"true\"}}\ndata: {LOG_LEVEL: info}\n"
	}
	return files
}

// TestServeKilledConverges: serve killed (SIGKILL) in the middle of its first apply leaves
// the GitOps repository valid (git fsck), and started again it converges to exactly the tree
// `fleetform render` gives.
func TestServeKilledConverges(t *testing.T) {
	dir := t.TempDir()
	fleet := dir + "/fleet"
	if err := fleetgen.Write(fleet, fleetgen.Spec{Targets: 200, ClusterTypes: 20}); err != nil {
		t.Fatal(err)
	}
	cp := gittest.NewBare(t)
	cp.CommitDir(t, "main", fleet)
	gitopsRepo := gittest.NewBare(t)
	args := []string{"--control-plane", cp.Dir, "--gitops", gitopsRepo.Dir, "--interval", "1h", "--log-level", "debug"}
	env := []string{"FLEETFORM_HUB_ADMIN_TOKEN=admin-token"}
	data := t.TempDir()

	killed := exec.CommandContext(t.Context(), "fleetform", append([]string{"serve", "--addr", "127.0.0.1:0", "--data-dir", data}, args...)...)
	killed.Env = append(killed.Environ(), env...)
	stderr, err := killed.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := killed.Start(); err != nil {
		t.Fatal(err)
	}
	lines := bufio.NewScanner(stderr)
	for lines.Scan() && !strings.Contains(lines.Text(), "msg=rendering") {
	}
	if err := killed.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = killed.Wait()
	gittest.Fsck(t, gitopsRepo.Dir)

	s := startServe(t, env, append(args[:len(args)-2], "--data-dir", data)...)
	s.until(t, "synced", func() bool { return s.sync(t, "dev").GitOpsCommit != "" })
	out := dir + "/out"
	fleetformCLI(t, "render", "--control-plane", cp.Dir, "--env", "dev", "--out", out)
	want := gittest.ReadDir(t, out)
	got := gitopsRepo.Files(t, "dev")
	for p := range got {
		if strings.HasPrefix(p, ".fleetform/") {
			delete(got, p)
		}
	}
	if len(got) != len(want) {
		t.Fatalf("the GitOps branch has %d files, render gives %d", len(got), len(want))
	}
	for p, content := range want {
		if got[p] != content {
			t.Errorf("%s differs from render's", p)
		}
	}
	gittest.Fsck(t, gitopsRepo.Dir)
}

// fleetformCLI runs a fleetform command in the test process and requires it to succeed.
func fleetformCLI(t *testing.T, args ...string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	if code := cli.Main(t.Context(), args, nil, &stdout, &stderr); code != cli.ExitOK {
		t.Fatalf("fleetform %s: exit %d\n%s%s", strings.Join(args, " "), code, stdout.String(), stderr.String())
	}
}

// TestServeOneProcessPerSQLiteFile: on SQLite serve is one process; a second one on the same
// database stops at once and says why, before it says it serves anything. One on a port in
// use stops before it creates a database.
func TestServeOneProcessPerSQLiteFile(t *testing.T) {
	cp, gitopsRepo := gittest.NewBare(t), gittest.NewBare(t)
	cp.Commit(t, "main", serveControlPlane(gitopsRepo.Dir))
	data := t.TempDir()
	env := []string{"FLEETFORM_HUB_ADMIN_TOKEN=admin-token"}
	startServe(t, env, "--control-plane", cp.Dir, "--interval", "1h", "--data-dir", data)
	second := exec.CommandContext(t.Context(), "fleetform", "serve", "--control-plane", cp.Dir, "--addr", "127.0.0.1:0", "--data-dir", data)
	second.Env = append(second.Environ(), env...)
	out, err := second.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != cli.ExitFailed || !strings.Contains(string(out), "another process leads on this store") ||
		strings.Contains(string(out), "serving") {
		t.Errorf("a second serve on the same SQLite file: %v\n%s", err, out)
	}

	busy, err := (&net.ListenConfig{}).Listen(t.Context(), "tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = busy.Close() }()
	fresh := t.TempDir()
	var stdout, stderr bytes.Buffer
	code := cli.Main(t.Context(), []string{"serve", "--control-plane", cp.Dir, "--addr", busy.Addr().String(), "--data-dir", fresh}, nil, &stdout, &stderr)
	if code == cli.ExitOK || !strings.Contains(stderr.String(), "address already in use") {
		t.Errorf("serve on a port in use: exit %d\n%s", code, stderr.String())
	}
	if _, err := os.Stat(filepath.Join(fresh, "fleetform.db")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("serve on a port in use left a database: %v", err)
	}
}
