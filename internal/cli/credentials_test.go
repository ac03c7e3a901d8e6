package cli_test

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/fleetform/fleetform/internal/cli"
	"github.com/fleetform/fleetform/internal/testutil/gittest"
)

// authLog records the Authorization header of every request a test server answered.
type authLog struct {
	mu   sync.Mutex
	reqs []request
}

type request struct{ method, path, auth string }

func (l *authLog) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		l.mu.Lock()
		l.reqs = append(l.reqs, request{r.Method, r.URL.Path, r.Header.Get("Authorization")})
		l.mu.Unlock()
		h.ServeHTTP(w, r)
	})
}

func (l *authLog) requests() []request {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]request(nil), l.reqs...)
}

// assertNoAuth fails when any request carried an Authorization header; with contacted,
// also when the server was not asked anything (the test would prove nothing).
func (l *authLog) assertNoAuth(t *testing.T, name string, contacted bool) {
	t.Helper()
	reqs := l.requests()
	if contacted && len(reqs) == 0 {
		t.Errorf("%s was never contacted", name)
	}
	for _, r := range reqs {
		if r.auth != "" {
			t.Errorf("%s received a credential: %s %s with Authorization %q", name, r.method, r.path, r.auth)
		}
	}
}

// gitHost is a loopback HTTP git server (its own host and port) that logs Authorization.
type gitHost struct {
	url  string
	root string
	log  *authLog
}

func newGitHost(t *testing.T) *gitHost {
	t.Helper()
	h := &gitHost{root: t.TempDir(), log: &authLog{}}
	srv := httptest.NewServer(h.log.wrap(gittest.GitHandler(t, h.root)))
	t.Cleanup(srv.Close)
	h.url = srv.URL
	return h
}

// repo creates a bare repository on the host with files on main and returns its URL.
func (h *gitHost) repo(t *testing.T, name string, files map[string]string) string {
	t.Helper()
	r, err := gittest.InitRepo(filepath.Join(h.root, name), true)
	if err != nil {
		t.Fatal(err)
	}
	if files != nil {
		r.Commit(t, "main", files)
	}
	return h.url + "/" + name
}

// redirectingHost answers every request with a redirect to the same path on target.
func redirectingHost(t *testing.T, target string) (string, *authLog) {
	t.Helper()
	log := &authLog{}
	srv := httptest.NewServer(log.wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, target+r.URL.RequestURI(), http.StatusFound)
	})))
	t.Cleanup(srv.Close)
	return srv.URL, log
}

// controlPlaneFiles is a folder-layout control plane whose environment dev writes to
// gitopsURL and registers the workloads of registrationURL (none when empty).
func controlPlaneFiles(gitopsURL, registrationURL string) map[string]string {
	files := map[string]string{"environments/dev/environment.yaml": `apiVersion: scheduler.kalypso.io/v1alpha1
kind: Environment
metadata:
  name: dev
spec:
  controlPlane: {repo: "", branch: "", path: ""}
---
apiVersion: scheduler.kalypso.io/v1alpha1
kind: GitOpsRepo
metadata:
  name: dev
spec:
  repo: ` + gitopsURL + `
  branch: dev
  path: .
`}
	if registrationURL != "" {
		files["registrations.yaml"] = `apiVersion: scheduler.kalypso.io/v1alpha1
kind: WorkloadRegistration
metadata:
  name: apps
spec:
  workload:
    repo: ` + registrationURL + `
    branch: main
    path: ./workloads
  workspace: team
`
	}
	return files
}

// workloadFiles is a workload repository with one workload for dev.
var workloadFiles = map[string]string{"workloads/w.yaml": `apiVersion: scheduler.kalypso.io/v1alpha1
kind: Workload
metadata:
  name: w
spec:
  deploymentTargets:
    - name: dev
      environment: dev
      manifests: {repo: https://example.com/w, branch: main, path: ./dev}
`}

func basic(user, password string) string {
	return "Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+password))
}

// run runs fleetform and returns its exit code and stderr.
func run(t *testing.T, args ...string) (int, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := cli.Main(t.Context(), args, nil, &stdout, &stderr)
	return code, stderr.String()
}

func clearCredentialEnv(t *testing.T) {
	t.Helper()
	for _, k := range []string{"FLEETFORM_GIT_TOKEN", "FLEETFORM_GIT_USERNAME", "FLEETFORM_GIT_TOKEN_HOSTS",
		"FLEETFORM_GITHUB_TOKEN", "GITHUB_TOKEN", "FLEETFORM_CONFIG"} {
		t.Setenv(k, "")
	}
	t.Setenv("FLEETFORM_CACHE_DIR", t.TempDir())
}

// TestLoadingSendsNoTokenToARegisteredHost: reading a control plane (go-git), the token goes
// only where it is configured for; a WorkloadRegistration naming another host (here another
// port) gets none, and FLEETFORM_GIT_TOKEN is never sent over plain http.
func TestLoadingSendsNoTokenToARegisteredHost(t *testing.T) {
	clearCredentialEnv(t)
	t.Setenv("FLEETFORM_GIT_TOKEN", "legacy-secret")
	t.Setenv("CP_TOKEN", "cp-secret")
	other := newGitHost(t)
	registration := other.repo(t, "apps.git", workloadFiles)
	cpHost := newGitHost(t)
	cp := cpHost.repo(t, "cp.git", controlPlaneFiles("https://example.com/gitops", registration))

	t.Run("FLEETFORM_GIT_TOKEN alone", func(t *testing.T) {
		if code, stderr := run(t, "validate", "--control-plane", cp, "--ref", "main"); code != cli.ExitOK {
			t.Fatalf("validate: exit %d\n%s", code, stderr)
		}
		cpHost.log.assertNoAuth(t, "the control plane's http host", true)
		other.log.assertNoAuth(t, "the registration's host", true)
	})
	t.Run("a credential for the control plane's host", func(t *testing.T) {
		config := writeConfig(t, "credentials:\n- url: "+cpHost.url+"\n  tokenEnv: CP_TOKEN\n  allowInsecureHTTP: true\n")
		before := len(cpHost.log.requests())
		if code, stderr := run(t, "validate", "--control-plane", cp, "--ref", "main", "--config", config); code != cli.ExitOK {
			t.Fatalf("validate: exit %d\n%s", code, stderr)
		}
		reqs := cpHost.log.requests()[before:]
		if len(reqs) == 0 {
			t.Fatal("the control plane was not fetched")
		}
		for _, r := range reqs {
			if r.auth != basic("git", "cp-secret") {
				t.Errorf("control plane %s %s: Authorization %q, want the configured credential", r.method, r.path, r.auth)
			}
		}
		other.log.assertNoAuth(t, "the registration's host", true)
	})
}

// TestGitOpsWritesSendTheTokenOnlyToItsHost: planning and applying (the git CLI), the
// token goes to the configured GitOps host, fetch and push, and never to a GitOps repository
// only the control plane names.
func TestGitOpsWritesSendTheTokenOnlyToItsHost(t *testing.T) {
	clearCredentialEnv(t)
	t.Setenv("FLEETFORM_GIT_TOKEN", "legacy-secret")
	t.Setenv("GITOPS_TOKEN", "gitops-secret")
	named := newGitHost(t) // the host only the control plane names
	namedURL := named.repo(t, "gitops.git", nil)
	cp := t.TempDir()
	writeTree(t, cp, controlPlaneFiles(namedURL, ""))

	if code, stderr := run(t, "plan", "--control-plane", cp, "--env", "dev"); code != cli.ExitOK {
		t.Fatalf("plan: exit %d\n%s", code, stderr)
	}
	named.log.assertNoAuth(t, "the GitOps host the control plane names", true)

	mine := newGitHost(t)
	mineURL := mine.repo(t, "gitops.git", nil)
	config := writeConfig(t, "credentials:\n- url: "+mine.url+"/gitops\n  tokenEnv: GITOPS_TOKEN\n  username: bot\n  allowInsecureHTTP: true\n")
	if code, stderr := run(t, "apply", "--control-plane", cp, "--env", "dev", "--gitops", mineURL, "--config", config, "--log-level", "debug"); code != cli.ExitOK {
		t.Fatalf("apply: exit %d\n%s", code, stderr)
	} else if strings.Contains(stderr, "gitops-secret") || !strings.Contains(stderr, `msg="credential used"`) ||
		!strings.Contains(stderr, `source="env GITOPS_TOKEN"`) {
		t.Errorf("debug log: want a credential used line naming its source, never the secret:\n%s", stderr)
	}
	pushed := false
	for _, r := range mine.log.requests() {
		if r.auth != basic("bot", "gitops-secret") {
			t.Errorf("GitOps host %s %s: Authorization %q, want the configured credential", r.method, r.path, r.auth)
		}
		pushed = pushed || (r.method == http.MethodPost && strings.HasSuffix(r.path, "/git-receive-pack"))
	}
	if !pushed {
		t.Errorf("apply did not push: %v", mine.log.requests())
	}
	named.log.assertNoAuth(t, "the GitOps host the control plane names", true)
}

// TestCredentialsDoNotFollowRedirects: a host with a credential that redirects elsewhere
// never makes the credential go there, through go-git (loading) or the git CLI (plan).
func TestCredentialsDoNotFollowRedirects(t *testing.T) {
	clearCredentialEnv(t)
	t.Setenv("REDIRECTOR_TOKEN", "redirector-secret")
	target := newGitHost(t)
	target.repo(t, "cp.git", controlPlaneFiles("https://example.com/gitops", ""))
	target.repo(t, "gitops.git", nil)
	redirector, redirectorLog := redirectingHost(t, target.url)
	config := writeConfig(t, "credentials:\n- url: "+redirector+"\n  tokenEnv: REDIRECTOR_TOKEN\n  allowInsecureHTTP: true\n")

	// go-git follows the redirect of its first request, without the credential.
	if code, stderr := run(t, "validate", "--control-plane", redirector+"/cp.git", "--ref", "main", "--config", config); code != cli.ExitOK {
		t.Fatalf("validate through a redirect: exit %d\n%s", code, stderr)
	}
	if len(redirectorLog.requests()) == 0 {
		t.Fatal("the redirecting host was never contacted")
	}
	target.log.assertNoAuth(t, "the host the redirect points at (go-git)", true)

	// git is told not to follow redirects where it sends a credential.
	before := len(target.log.requests())
	code, stderr := run(t, "plan", "--control-plane", target.url+"/cp.git", "--ref", "main", "--env", "dev",
		"--gitops", redirector+"/gitops.git", "--config", config)
	if code == cli.ExitOK || !strings.Contains(stderr, "302") {
		t.Errorf("plan through a redirect with a credential: exit %d; want git to refuse the redirect\n%s", code, stderr)
	}
	for _, r := range target.log.requests()[before:] {
		if strings.Contains(r.path, "gitops.git") {
			t.Errorf("git followed the redirect: %s %s (Authorization %q)", r.method, r.path, r.auth)
		}
	}
	target.log.assertNoAuth(t, "the host the redirect points at (git)", true)
	if strings.Contains(stderr, "redirector-secret") {
		t.Errorf("stderr shows the secret:\n%s", stderr)
	}
}

// TestForgeTokenIsNotSentOverHTTP: with --pr, the forge token does not go to a plain http API,
// even one given with --forge-url, unless a credentials entry allows it.
func TestForgeTokenIsNotSentOverHTTP(t *testing.T) {
	clearCredentialEnv(t)
	t.Setenv("FLEETFORM_GITHUB_TOKEN", "forge-secret")
	root := t.TempDir()
	if _, err := gittest.InitRepo(filepath.Join(root, "org", "gitops.git"), true); err != nil {
		t.Fatal(err)
	}
	api := &authLog{}
	mux := http.NewServeMux()
	mux.Handle("/org/", gittest.GitHandler(t, root))
	mux.Handle("/api/v3/", api.wrap(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, "[]")
	})))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	cp := t.TempDir()
	writeTree(t, cp, controlPlaneFiles("https://example.com/gitops", ""))

	code, stderr := run(t, "apply", "--control-plane", cp, "--env", "dev", "--gitops", srv.URL+"/org/gitops.git",
		"--pr", "--forge-url", srv.URL+"/api/v3/")
	if code != cli.ExitUsage || !strings.Contains(stderr, "plain http") {
		t.Errorf("apply --pr with an http forge API: exit %d, want %d and a message saying why\n%s", code, cli.ExitUsage, stderr)
	}
	api.assertNoAuth(t, "the http forge API", false)
	if n := len(api.requests()); n != 0 {
		t.Errorf("the forge API was asked %d time(s)", n)
	}
}

// writeTree writes files (slash-separated path -> content) under dir.
func writeTree(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for p, content := range files {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestAppSendsNoTokenToTheRepositoryItsFilesName: without --gitops, `app plan` writes to the
// manifests.repo the application's own workload.yaml names; that host is not one the command
// line names, so FLEETFORM_GIT_TOKEN is not sent there (a change to the application's files
// must not redirect the token).
func TestAppSendsNoTokenToTheRepositoryItsFilesName(t *testing.T) {
	clearCredentialEnv(t)
	t.Setenv("FLEETFORM_GIT_TOKEN", "legacy-secret")
	r := newAppRepos(t, t.TempDir())
	r.sourceFiles["workload.yaml"] = strings.ReplaceAll(r.sourceFiles["workload.yaml"], "https://github.com/example/hello-world-gitops", "https://evil.invalid/x")
	r.source.Commit(t, "main", r.sourceFiles)
	code, stderr := run(t, r.args("plan", "--env", "dev", "--version", "1.4.2", "--image-tag", "1.4.2", "--log-level", "debug")...)
	if code == cli.ExitOK {
		t.Fatalf("app plan against an unreachable repository: exit 0\n%s", stderr)
	}
	if !strings.Contains(stderr, "FLEETFORM_GIT_TOKEN not sent") || !strings.Contains(stderr, "https://evil.invalid/x") ||
		strings.Contains(stderr, "credential used") {
		t.Errorf("want FLEETFORM_GIT_TOKEN kept from https://evil.invalid/x:\n%s", stderr)
	}
}
