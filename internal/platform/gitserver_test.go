package platform_test

import (
	"io"
	"net"
	"net/http/cgi"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fleetform/fleetform/internal/gittest"
)

// serveGit serves the repositories in root over git's smart HTTP protocol from a loopback
// server, through `git http-backend` (go-git has no HTTP server). It returns the server's
// base URL; repository r is at base + "/" + its folder name. The test is skipped when the
// git CLI is not installed.
func serveGit(t *testing.T, root string) string {
	t.Helper()
	gitBin, err := exec.LookPath("git")
	if err != nil {
		t.Skip("git CLI not installed: the HTTP git server needs git http-backend")
	}
	out, err := exec.CommandContext(t.Context(), gitBin, "--exec-path").Output()
	if err != nil {
		t.Skipf("git --exec-path: %v", err)
	}
	h := &cgi.Handler{
		Path: filepath.Join(strings.TrimSpace(string(out)), "git-http-backend"),
		Env: []string{
			"GIT_PROJECT_ROOT=" + root,
			"GIT_HTTP_EXPORT_ALL=1",
			"GIT_CONFIG_GLOBAL=/dev/null",
			"GIT_CONFIG_NOSYSTEM=1",
		},
		Stderr: io.Discard, // "Not a git repository" for the tests' missing repositories
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL
}

// serveRepo serves one repository and returns its URL.
func serveRepo(t *testing.T, r *gittest.Repo) string {
	t.Helper()
	return serveGit(t, filepath.Dir(r.Dir)) + "/" + filepath.Base(r.Dir)
}

// closedURL returns an http URL on loopback where nothing listens.
func closedURL(t *testing.T) string {
	t.Helper()
	ln, err := (&net.ListenConfig{}).Listen(t.Context(), "tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	if err := ln.Close(); err != nil {
		t.Fatal(err)
	}
	return "http://" + addr
}
