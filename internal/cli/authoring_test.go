package cli_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/fleetform/fleetform/internal/authoring"
	"github.com/fleetform/fleetform/internal/cli"
	"github.com/fleetform/fleetform/internal/testutil/gittest"
)

// git runs git in dir (a work tree) without the user's configuration.
func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), "git", append([]string{"-C", dir}, args...)...)
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_NAME=test", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=test", "GIT_COMMITTER_EMAIL=t@example.com")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// runFF runs fleetform and returns its exit code, stdout and stderr.
func runFF(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := cli.Main(t.Context(), args, nil, &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

// newControlPlane makes a folder-layout control plane with fleetform init.
func newControlPlane(t *testing.T, dir string) {
	t.Helper()
	if code, out, errOut := runFF(t, "init", dir, "--environments", "dev,prod"); code != 0 {
		t.Fatalf("init: exit %d\n%s\n%s", code, out, errOut)
	}
}

// TestAuthoringRefusedJSON: a refused change with -o json prints one JSON document, with
// "valid": false and its errors, and exits 1; whether it is refused by validation (a
// located error) or as an operation (a name that is not DNS-1123, a duplicate).
func TestAuthoringRefusedJSON(t *testing.T) {
	cp := filepath.Join(t.TempDir(), "cp")
	newControlPlane(t, cp)
	runFF(t, "add", "cluster-type", "edge", "--env", "dev", "--control-plane", cp, "--commit")
	before := gittest.ReadDir(t, cp)
	for _, tc := range []struct {
		name  string
		args  []string
		error string // in the first error's message
		file  string // the first error's file ("" for an operation's error)
	}{
		{"unknown template", []string{"add", "cluster-type", "broken", "--env", "dev", "--reconciler", "builtin/nope"},
			`template "builtin/nope" not found`, "environments/dev/cluster-types/broken.yaml"},
		{"not DNS-1123", []string{"add", "cluster-type", "Not_DNS", "--env", "dev"}, `ClusterType name "Not_DNS"`, ""},
		{"duplicate", []string{"add", "cluster-type", "edge", "--env", "dev"}, `ClusterType "edge" already exists`, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := runFF(t, append(tc.args, "--control-plane", cp, "-o", "json")...)
			if code != cli.ExitFailed {
				t.Fatalf("exit %d, want %d\n%s\n%s", code, cli.ExitFailed, stdout, stderr)
			}
			dec := json.NewDecoder(strings.NewReader(stdout))
			var res authoring.Result
			if err := dec.Decode(&res); err != nil {
				t.Fatalf("stdout is not a JSON document: %v\n%s", err, stdout)
			}
			if _, err := dec.Token(); !errors.Is(err, io.EOF) {
				t.Fatalf("stdout holds more than one JSON document:\n%s", stdout)
			}
			if res.Valid || res.Written || len(res.Errors) == 0 || len(res.Operations) != 1 {
				t.Fatalf("result %+v, want invalid, unwritten, with errors", res)
			}
			if e := res.Errors[0]; !strings.Contains(e.Message, tc.error) || e.File != tc.file || e.Severity != "error" {
				t.Errorf("first error %+v, want %q in file %q", e, tc.error, tc.file)
			}
			if !strings.Contains(stderr, tc.error) {
				t.Errorf("stderr lacks the error:\n%s", stderr)
			}
		})
	}
	if after := gittest.ReadDir(t, cp); !equalFiles(before, after) {
		t.Error("a refused change touched the control plane")
	}
}

func equalFiles(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// TestAuthoringPullRequest: add --pr pushes the change as one commit on top of the target
// branch of origin to a new branch, opens a pull request on the (fake) forge with the
// fleet plan, and leaves the control plane's files and branches as they were.
func TestAuthoringPullRequest(t *testing.T) {
	cp, remote, gh, prFlags := newPullRequestControlPlane(t)
	base := gitOut(t, remote, "rev-parse", "main")
	before := gittest.ReadDir(t, cp)
	localTip := git(t, cp, "rev-parse", "main")

	code, stdout, stderr := runFF(t, append([]string{"add", "cluster-type", "edge", "--env", "dev", "--label", "region=west",
		"--control-plane", cp, "-o", "json"}, prFlags...)...)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	var res authoring.Result
	if err := json.Unmarshal([]byte(stdout), &res); err != nil {
		t.Fatalf("%v\n%s", err, stdout)
	}
	if !res.Valid || !res.Written || res.PullRequest == nil || res.PullRequest.Number != 42 || res.PullRequest.Base != "main" ||
		len(res.Commits) != 1 || !strings.HasPrefix(res.Commits[0].Branch, "fleetform/authoring/") {
		t.Fatalf("result %+v", res)
	}
	head := res.Commits[0].Branch
	if gh.body["head"] != head || gh.body["base"] != "main" || gh.body["title"] != "fleetform: add ClusterType edge in dev" ||
		!strings.Contains(gh.body["body"].(string), "- add ClusterType edge in dev") ||
		!strings.Contains(gh.body["body"].(string), "**dev**: 0 assignment(s) gained") {
		t.Errorf("create request %v", gh.body)
	}
	if want := []string{"POST /repos/org/gitops/pulls", "POST /repos/org/gitops/issues/42/labels"}; strings.Join(gh.calls, ",") != strings.Join(want, ",") {
		t.Errorf("forge calls %v, want %v", gh.calls, want)
	}
	// The remote's main did not move; the head branch is one commit on top of it, with the file.
	if got := gitOut(t, remote, "rev-parse", "main"); got != base {
		t.Errorf("main moved to %s", got)
	}
	if got := gitOut(t, remote, "rev-parse", head+"^"); got != base {
		t.Errorf("head's parent is %s, want main's tip %s", got, base)
	}
	if got := gitOut(t, remote, "rev-parse", head); got != res.Commits[0].Commit {
		t.Errorf("head is %s, want the commit %s", got, res.Commits[0].Commit)
	}
	if got := gitOut(t, remote, "show", head+":environments/dev/cluster-types/edge.yaml"); !strings.Contains(got, "region: west") {
		t.Errorf("the pushed cluster type:\n%s", got)
	}
	// The local control plane is untouched: the change is in the pull request only.
	if after := gittest.ReadDir(t, cp); !equalFiles(before, after) || git(t, cp, "rev-parse", "main") != localTip {
		t.Error("--pr changed the local control plane")
	}
}

// newPullRequestControlPlane makes a control plane (a local clone) whose origin is a bare
// repository served with a fake GitHub API that records the pull requests asked for; it
// returns the clone, the bare repository and the flags of a --pr run.
func newPullRequestControlPlane(t *testing.T) (cp, remote string, gh *fakeGitHub, prFlags []string) {
	t.Helper()
	root := t.TempDir()
	cp = filepath.Join(root, "work", "cp")
	newControlPlane(t, cp)
	remote = filepath.Join(root, "org", "gitops.git") // the fake forge serves org/gitops
	git(t, root, "clone", "-q", "--bare", cp, remote)
	gh = &fakeGitHub{t: t}
	mux := http.NewServeMux()
	mux.Handle("/org/", gittest.GitHandler(t, root))
	mux.Handle("/api/v3/", gh)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	git(t, cp, "remote", "add", "origin", srv.URL+"/org/gitops.git")
	t.Setenv("FLEETFORM_GITHUB_TOKEN", "test-token")
	config := writeConfig(t, "credentials:\n- url: "+srv.URL+"/api/v3/\n  tokenEnv: FLEETFORM_GITHUB_TOKEN\n  allowInsecureHTTP: true\n")
	return cp, remote, gh, []string{"--config", config, "--pr", "--forge-url", srv.URL + "/api/v3/"}
}

// TestAuthoringPullRequestFromABehindClone: the local clone's main is behind origin's (someone
// else pushed a change); --pr is refused, saying to bring them level, instead of opening a
// pull request whose files, made from the older version, would undo that change.
func TestAuthoringPullRequestFromABehindClone(t *testing.T) {
	cp, remote, gh, prFlags := newPullRequestControlPlane(t)
	other := filepath.Join(t.TempDir(), "other")
	git(t, filepath.Dir(other), "clone", "-q", remote, other)
	if err := os.WriteFile(filepath.Join(other, "NOTES.md"), []byte("alice was here\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	git(t, other, "add", "-A")
	git(t, other, "-c", "user.name=alice", "-c", "user.email=alice@example.com", "commit", "-qm", "canary")
	git(t, other, "push", "-q", "origin", "main")
	before := gitOut(t, remote, "for-each-ref", "--format=%(refname) %(objectname)")

	code, stdout, stderr := runFF(t, append([]string{"add", "cluster-type", "edge", "--env", "dev", "--label", "region=west",
		"--control-plane", cp}, prFlags...)...)
	if code == 0 || !strings.Contains(stderr, "git pull") {
		t.Errorf("exit %d, want a refusal that says to pull\n%s\n%s", code, stdout, stderr)
	}
	if after := gitOut(t, remote, "for-each-ref", "--format=%(refname) %(objectname)"); after != before {
		t.Errorf("the remote changed:\n%s\nwant\n%s", after, before)
	}
	if len(gh.calls) != 0 {
		t.Errorf("the forge was asked %v", gh.calls)
	}
}

// TestAuthoringConcurrentOnAWorkTree: changes committed at the same time to the work tree
// fleetform init makes (each writer sees the others' files appear before their commit)
// either land or fail as a conflict (exit 1, "send it again"/"try again"), never as an
// internal error; every one that landed is in the file, and the work tree stays clean.
func TestAuthoringConcurrentOnAWorkTree(t *testing.T) {
	cp := filepath.Join(t.TempDir(), "cp")
	newControlPlane(t, cp)
	const n = 6
	codes, errs := make([]int, n), make([]string, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			codes[i], _, errs[i] = runFF(t, "set", "config", fmt.Sprintf("KEY_%d=v", i), "--env", "dev", "--environment-wide", "--control-plane", cp, "--commit")
		})
	}
	wg.Wait()
	config := ""
	for name, content := range gittest.ReadDir(t, cp) {
		if strings.HasPrefix(name, "environments/dev/") && strings.Contains(content, "kind: ConfigMap") {
			config += content
		}
	}
	landed := 0
	for i := range n {
		key := fmt.Sprintf("KEY_%d:", i)
		switch {
		case codes[i] == 0:
			landed++
			if !strings.Contains(config, key) {
				t.Errorf("%s landed but is not in the config:\n%s", key, config)
			}
		case !strings.Contains(errs[i], "try again") && !strings.Contains(errs[i], "moved"):
			t.Errorf("%s: exit %d, not a conflict:\n%s", key, codes[i], errs[i])
		}
	}
	if landed == 0 {
		t.Error("no change landed")
	}
	if status := git(t, cp, "status", "--porcelain"); status != "" {
		t.Errorf("the work tree is not clean:\n%s", status)
	}
}

// TestInitWritesTheDefaultGate: the gate a promotion has by default (every cluster of the
// source compliant) is written out in the environments init makes, where it is read.
func TestInitWritesTheDefaultGate(t *testing.T) {
	cp := filepath.Join(t.TempDir(), "cp")
	newControlPlane(t, cp)
	files := gittest.ReadDir(t, cp)
	var prod string
	for name, content := range files {
		if strings.Contains(name, "prod") && strings.Contains(content, "kind: Environment") {
			prod = content
		}
	}
	if !strings.Contains(prod, "minCompliantPercent: 100") || !strings.Contains(prod, "from: dev") {
		t.Errorf("prod's Environment does not show its gate:\n%s", prod)
	}
}

// TestClusterTypeInSeveralEnvironments: add cluster-type takes several environments (--env
// repeated or dev,prod) in one change; a command that takes one refuses a second --env
// instead of silently keeping the last.
func TestClusterTypeInSeveralEnvironments(t *testing.T) {
	cp := filepath.Join(t.TempDir(), "cp")
	newControlPlane(t, cp)
	if code, out, errOut := runFF(t, "add", "cluster-type", "edge", "--env", "dev", "--env", "prod", "--control-plane", cp, "--commit"); code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	if code, out, errOut := runFF(t, "add", "cluster-type", "core", "--env", "dev,prod", "--control-plane", cp, "--commit"); code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	files := gittest.ReadDir(t, cp)
	for _, f := range []string{"environments/dev/cluster-types/edge.yaml", "environments/prod/cluster-types/edge.yaml",
		"environments/dev/cluster-types/core.yaml", "environments/prod/cluster-types/core.yaml"} {
		if _, ok := files[f]; !ok {
			t.Errorf("%s was not written", f)
		}
	}
	before := gittest.ReadDir(t, cp)
	code, _, errOut := runFF(t, "add", "policy", "p", "--env", "dev", "--env", "prod", "--targets", "a=b", "--cluster-types", "c=d", "--control-plane", cp)
	if code != cli.ExitUsage || !strings.Contains(errOut, "this command takes one environment") {
		t.Errorf("a second --env on add policy: exit %d\n%s", code, errOut)
	}
	if after := gittest.ReadDir(t, cp); !equalFiles(before, after) {
		t.Error("a refused command touched the control plane")
	}
}
