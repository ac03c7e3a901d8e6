package cli_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/fleetform/fleetform/internal/testutil/gittest"
)

// appForge is a fake GitHub API for app apply --pr: it records every call and keeps the pull
// requests it opened open.
type appForge struct {
	t       *testing.T
	mu      sync.Mutex
	calls   []string
	created []map[string]any // create requests, as sent
	open    []map[string]any
}

func (f *appForge) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	call := r.Method + " " + strings.TrimPrefix(r.URL.Path, "/api/v3")
	f.calls = append(f.calls, call)
	w.Header().Set("Content-Type", "application/json")
	var reply any
	switch {
	case call == "GET /repos/org/hello-gitops/pulls":
		reply = f.open
	case call == "POST /repos/org/hello-gitops/pulls":
		var body map[string]any
		data, _ := io.ReadAll(r.Body)
		if err := json.Unmarshal(data, &body); err != nil {
			f.t.Errorf("create: %v", err)
		}
		f.created = append(f.created, body)
		n := 41 + len(f.created)
		pr := map[string]any{"number": n, "state": "open", "title": body["title"], "body": body["body"],
			"html_url": "https://github.example/org/hello-gitops/pull/" + strconv.Itoa(n),
			"user":     map[string]any{"login": "fleetform-bot"},
			"head":     map[string]any{"ref": body["head"], "repo": map[string]any{"full_name": "org/hello-gitops"}},
			"base":     map[string]any{"ref": body["base"], "repo": map[string]any{"full_name": "org/hello-gitops"}}}
		f.open = append(f.open, pr)
		w.WriteHeader(http.StatusCreated)
		reply = pr
	case strings.HasPrefix(call, "POST /repos/org/hello-gitops/issues/") && strings.HasSuffix(call, "/labels"):
		reply = []map[string]string{{"name": "fleetform"}}
	default:
		f.t.Errorf("unexpected call %s", call)
		w.WriteHeader(http.StatusNotFound)
		return
	}
	if err := json.NewEncoder(w).Encode(reply); err != nil {
		f.t.Errorf("reply: %v", err)
	}
}

// TestAppPullRequestIdempotent runs app apply --pr twice for the same source commit, with a
// config change in between: one pull request, updated by the second run (its head branch
// moved forward), never a second one; the base branch does not move.
func TestAppPullRequestIdempotent(t *testing.T) {
	root := t.TempDir()
	r := newAppRepos(t, filepath.Join(root, "repos"))
	remote, err := gittest.InitRepo(filepath.Join(root, "org", "hello-gitops.git"), true)
	if err != nil {
		t.Fatal(err)
	}
	base := remote.Commit(t, "dev", map[string]string{"README.md": "hello-world GitOps\n"})
	gh := &appForge{t: t}
	mux := http.NewServeMux()
	mux.Handle("/org/", gittest.GitHandler(t, root))
	mux.Handle("/api/v3/", gh)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	t.Setenv("FLEETFORM_GITHUB_TOKEN", "test-token")
	t.Setenv("FLEETFORM_CACHE_DIR", t.TempDir())
	config := writeConfig(t, "credentials:\n- url: "+srv.URL+"/api/v3/\n  tokenEnv: FLEETFORM_GITHUB_TOKEN\n  allowInsecureHTTP: true\n")
	gitops := srv.URL + "/org/hello-gitops.git"
	args := r.args("apply", "--env", "dev", "--gitops", gitops, "--pr", "--forge-url", srv.URL+"/api/v3/", "--config", config,
		"--version", "1.4.2", "--image-tag", "1.4.2", "-o", "json")

	type prDoc struct {
		Branches []struct {
			Branch, Commit, Head string
			Targets              []string
			PullRequest          struct {
				Number  int
				Updated bool
			}
		}
	}
	var first, second prDoc
	if err := json.Unmarshal([]byte(fleetform(t, 0, args...)), &first); err != nil {
		t.Fatal(err)
	}
	if len(first.Branches) != 1 || first.Branches[0].PullRequest.Number != 42 || first.Branches[0].PullRequest.Updated {
		t.Fatalf("first run: %+v", first)
	}
	head := first.Branches[0].Head
	if want := "fleetform/dev/app/hello-world/" + r.source.Tip(t, "main").String()[:12] + "/dev"; head != want {
		t.Errorf("head %s, want %s", head, want)
	}
	if got := gitOut(t, remote.Dir, "rev-parse", head+"^"); got != base.String() {
		t.Errorf("head's parent %s, want dev's tip %s", got, base)
	}

	r.dev["performance-test/values.yaml"] = strings.Replace(r.dev["performance-test/values.yaml"], "Debug", "Info", 1)
	r.config.Commit(t, "dev", r.dev)
	if err := json.Unmarshal([]byte(fleetform(t, 0, args...)), &second); err != nil {
		t.Fatal(err)
	}
	if len(second.Branches) != 1 || second.Branches[0].PullRequest.Number != 42 || !second.Branches[0].PullRequest.Updated ||
		second.Branches[0].Head != head {
		t.Fatalf("second run: %+v", second)
	}
	if got := gitOut(t, remote.Dir, "rev-parse", head+"^"); got != first.Branches[0].Commit {
		t.Errorf("the head branch did not move forward: parent %s, want %s", got, first.Branches[0].Commit)
	}
	if got := gitOut(t, remote.Dir, "show", head+":performance-test/configmap-hello-world-config.yaml"); !strings.Contains(got, `LOG_LEVEL: "Info"`) {
		t.Errorf("head has:\n%s", got)
	}
	if got := gitOut(t, remote.Dir, "rev-parse", "dev"); got != base.String() {
		t.Errorf("dev moved to %s", got)
	}
	if len(gh.created) != 1 {
		t.Fatalf("%d pull requests opened, want 1; calls %v", len(gh.created), gh.calls)
	}
	c := gh.created[0]
	if c["title"] != "Deploy to 'dev' '1.4.2'" || c["base"] != "dev" || c["head"] != head ||
		!strings.Contains(c["body"].(string), "Deploy hello-world 1.4.2 to dev: functional-test, performance-test") ||
		!strings.Contains(c["body"].(string), "<!-- fleetform:environment=dev/app/hello-world -->") {
		t.Errorf("create request %v", c)
	}

	// A reviewer pushes a fix-up to the pull request's branch: the next run stops rather than
	// commit the whole render on top of it, which would undo it.
	files := remote.Files(t, head)
	files["performance-test/NOTE.md"] = "reviewed\n"
	fixup := remote.Commit(t, head, files)
	r.dev["performance-test/values.yaml"] = strings.Replace(r.dev["performance-test/values.yaml"], "Info", "Warning", 1)
	r.config.Commit(t, "dev", r.dev)
	if code, stderr := run(t, args...); code == 0 || !strings.Contains(stderr, "that fleetform did not make") {
		t.Errorf("a run after a reviewer's commit: exit %d\n%s", code, stderr)
	}
	if got := gitOut(t, remote.Dir, "rev-parse", head); got != fixup.String() {
		t.Errorf("the head branch moved from the reviewer's commit %s to %s", fixup, got)
	}
}
