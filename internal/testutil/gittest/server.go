package gittest

import (
	"crypto/subtle"
	"io"
	"net"
	"net/http"
	"net/http/cgi" //nolint:gosec // serves git http-backend to tests; httpoxy is fixed since Go 1.6.3
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// ServeGit serves the repositories in root over git's smart HTTP protocol (fetch and push)
// from a loopback server, through `git http-backend` (go-git has no HTTP server). It
// returns the server's base URL; the repository in folder f is at base + "/" + f. The test
// is skipped when the git CLI is not installed.
func ServeGit(tb testing.TB, root string) string {
	tb.Helper()
	srv := httptest.NewServer(GitHandler(tb, root))
	tb.Cleanup(srv.Close)
	return srv.URL
}

// GitHandler is the handler ServeGit serves, for a test server that also answers other
// requests (a forge API, a recorder of headers). The test is skipped when the git CLI is not
// installed.
func GitHandler(tb testing.TB, root string) http.Handler {
	tb.Helper()
	gitBin, err := exec.LookPath("git")
	if err != nil {
		tb.Skip("git CLI not installed: the HTTP git server needs git http-backend")
	}
	out, err := exec.CommandContext(tb.Context(), gitBin, "--exec-path").Output() //nolint:gosec // gitBin is git from PATH (exec.LookPath), in a test helper
	if err != nil {
		tb.Skipf("git --exec-path: %v", err)
	}
	h := &cgi.Handler{
		Path: filepath.Join(strings.TrimSpace(string(out)), "git-http-backend"),
		Env: []string{
			"GIT_PROJECT_ROOT=" + root,
			"GIT_HTTP_EXPORT_ALL=1",
			"GIT_CONFIG_GLOBAL=/dev/null",
			"GIT_CONFIG_NOSYSTEM=1",
			"GIT_CONFIG_COUNT=1", "GIT_CONFIG_KEY_0=http.receivepack", "GIT_CONFIG_VALUE_0=true",
		},
		Stderr: io.Discard, // "Not a git repository" for the tests' missing repositories
	}
	return h
}

// ServeGitAuth is ServeGit behind HTTP Basic authentication: every request without user
// and password is answered 401 with a challenge (as a forge does), so that git sends the
// credential it was given.
func ServeGitAuth(tb testing.TB, root, user, password string) string {
	tb.Helper()
	srv := httptest.NewServer(RequireBasicAuth(GitHandler(tb, root), user, password))
	tb.Cleanup(srv.Close)
	return srv.URL
}

// RequireBasicAuth answers 401 to a request without user and password, and passes the
// others to h.
func RequireBasicAuth(h http.Handler, user, password string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u, p, ok := r.BasicAuth()
		if !ok || subtle.ConstantTimeCompare([]byte(u), []byte(user)) != 1 || subtle.ConstantTimeCompare([]byte(p), []byte(password)) != 1 {
			w.Header().Set("WWW-Authenticate", `Basic realm="git"`)
			http.Error(w, "authentication required", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// ServeRepo serves one repository and returns its URL.
func ServeRepo(tb testing.TB, r *Repo) string {
	tb.Helper()
	return ServeGit(tb, filepath.Dir(r.Dir)) + "/" + filepath.Base(r.Dir)
}

// ClosedURL returns an http URL on loopback where nothing listens.
func ClosedURL(tb testing.TB) string {
	tb.Helper()
	ln, err := (&net.ListenConfig{}).Listen(tb.Context(), "tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	addr := ln.Addr().String()
	if err := ln.Close(); err != nil {
		tb.Fatal(err)
	}
	return "http://" + addr
}
