package cli_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/fleetform/fleetform/internal/cli"
	"github.com/fleetform/fleetform/internal/testutil/gittest"
)

// fakeGitHub answers the pull-request calls apply --pr makes, and records them.
type fakeGitHub struct {
	t     *testing.T
	mu    sync.Mutex
	calls []string
	body  map[string]any // the create request
	open  []map[string]any
}

func (f *fakeGitHub) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if got := r.Header.Get("Authorization"); got != "Bearer test-token" {
		f.t.Errorf("%s %s: Authorization %q", r.Method, r.URL.Path, got)
	}
	call := r.Method + " " + strings.TrimPrefix(r.URL.Path, "/api/v3")
	f.calls = append(f.calls, call)
	w.Header().Set("Content-Type", "application/json")
	var reply any
	switch call {
	case "GET /repos/org/gitops/pulls":
		reply = f.open
	case "POST /repos/org/gitops/pulls":
		data, _ := io.ReadAll(r.Body)
		if err := json.Unmarshal(data, &f.body); err != nil {
			f.t.Errorf("create request: %v", err)
		}
		w.WriteHeader(http.StatusCreated)
		reply = pull(42, f.body["head"].(string), f.body["base"].(string), f.body["body"].(string), "fleetform-bot")
	case "POST /repos/org/gitops/issues/42/labels":
		reply = []map[string]string{{"name": "fleetform"}}
	case "POST /repos/org/gitops/issues/7/comments":
		w.WriteHeader(http.StatusCreated)
		reply = map[string]int{"id": 1}
	case "PATCH /repos/org/gitops/pulls/7":
		reply = pull(7, "fleetform/dev/20260101-000000", "dev", "", "fleetform-bot")
	case "DELETE /repos/org/gitops/git/refs/heads/fleetform/dev/20260101-000000":
		w.WriteHeader(http.StatusNoContent)
		return
	default:
		f.t.Errorf("unexpected call %s", call)
		w.WriteHeader(http.StatusNotFound)
		return
	}
	if err := json.NewEncoder(w).Encode(reply); err != nil {
		f.t.Errorf("reply to %s: %v", call, err)
	}
}

func pull(n int, head, base, body, user string) map[string]any {
	return pullFrom(n, "org/gitops", head, base, body, user)
}

// pullFrom is a pull request whose head branch is in headRepo (another one: a fork).
func pullFrom(n int, headRepo, head, base, body, user string) map[string]any {
	return map[string]any{
		"number": n, "state": "open", "title": "t", "body": body,
		"html_url": "https://github.example/org/gitops/pull/" + strconv.Itoa(n),
		"user":     map[string]any{"login": user},
		"head":     map[string]any{"ref": head, "repo": map[string]any{"full_name": headRepo}},
		"base":     map[string]any{"ref": base, "repo": map[string]any{"full_name": "org/gitops"}},
	}
}

func TestApplyPullRequest(t *testing.T) {
	k := gittest.NewKalypso(t)
	root := t.TempDir()
	remote, err := gittest.InitRepo(filepath.Join(root, "org", "gitops.git"), true)
	if err != nil {
		t.Fatal(err)
	}
	base := remote.Commit(t, "dev", map[string]string{"README.md": "platform GitOps repository\n"})
	gh := &fakeGitHub{t: t, open: []map[string]any{
		pull(7, "fleetform/dev/20260101-000000", "dev", "older\n<!-- fleetform:environment=dev -->", "fleetform-bot"),
		pull(8, "fix-readme", "dev", "a human's pull request", "alice"),
		pull(9, "fleetform/stage/20260101-000000", "dev", "<!-- fleetform:environment=stage -->", "fleetform-bot"),
		// A person's pull request on a branch named like fleetform's, without the marker.
		pull(10, "fleetform/dev/20250101-000000", "dev", "my own change on a branch named like the bot's", "bob"),
		// A fork's pull request with fleetform's branch name and marker.
		pullFrom(11, "mallory/gitops", "fleetform/dev/20260101-000000", "dev", "<!-- fleetform:environment=dev -->", "mallory"),
	}}
	// One host, as GitHub Enterprise Server: the repositories, and the API under /api/v3/.
	mux := http.NewServeMux()
	mux.Handle("/org/", gittest.GitHandler(t, root))
	mux.Handle("/api/v3/", gh)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	url := srv.URL + "/org/gitops.git"
	t.Setenv("FLEETFORM_GITHUB_TOKEN", "test-token")
	t.Setenv("FLEETFORM_CACHE_DIR", t.TempDir())
	config := writeConfig(t, "credentials:\n- url: "+srv.URL+"/api/v3/\n  tokenEnv: FLEETFORM_GITHUB_TOKEN\n  allowInsecureHTTP: true\n")

	var stdout, stderr bytes.Buffer
	code := cli.Main(t.Context(), []string{"apply", "--control-plane", k.ControlPlane.Dir, "--env", "dev", "--config", config,
		"--repo-map", gittest.SvcSrcURL + "=" + k.SvcSrc.Dir, "--gitops", url, "--pr", "--forge-url", srv.URL + "/api/v3/", "-o", "json"},
		nil, &stdout, &stderr)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout.String(), stderr.String())
	}
	var doc struct {
		Commit      string `json:"commit"`
		Branch      string `json:"branch"`
		PullRequest struct {
			Number int    `json:"number"`
			Base   string `json:"base"`
		} `json:"pullRequest"`
		Superseded []int `json:"superseded"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &doc); err != nil {
		t.Fatalf("%v\n%s", err, stdout.String())
	}
	if doc.PullRequest.Number != 42 || doc.PullRequest.Base != "dev" || !strings.HasPrefix(doc.Branch, "fleetform/dev/") {
		t.Errorf("pull request %+v on branch %s", doc.PullRequest, doc.Branch)
	}
	if len(doc.Superseded) != 1 || doc.Superseded[0] != 7 {
		t.Errorf("superseded %v, want [7] (never the humans' #8 and #10, stage's #9 or the fork's #11)", doc.Superseded)
	}
	// The base branch did not move; the head branch holds the commit on top of it.
	if got := gitOut(t, remote.Dir, "rev-parse", "dev"); got != base.String() {
		t.Errorf("dev moved to %s", got)
	}
	if got := gitOut(t, remote.Dir, "rev-parse", doc.Branch+"^"); got != base.String() {
		t.Errorf("head's parent is %s, want dev's tip %s", got, base)
	}
	if got := gitOut(t, remote.Dir, "rev-parse", doc.Branch); got != doc.Commit {
		t.Errorf("head is %s, want the applied commit %s", got, doc.Commit)
	}
	if !strings.Contains(gh.body["body"].(string), "<!-- fleetform:environment=dev -->") || gh.body["head"] != doc.Branch {
		t.Errorf("create request %v", gh.body)
	}
	for _, c := range gh.calls {
		if strings.Contains(c, "/8") || strings.Contains(c, "/9") || strings.Contains(c, "/10") || strings.Contains(c, "/11") ||
			strings.Contains(c, "fix-readme") || strings.Contains(c, "stage") || strings.Contains(c, "20250101") {
			t.Errorf("touched a pull request that is not fleetform's for dev: %s", c)
		}
	}
}

func gitOut(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), "git", append([]string{"--git-dir", dir}, args...)...)
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// writeConfig writes a config file and returns its path.
func writeConfig(t *testing.T, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "fleetform.yaml")
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}
