package github_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fleetform/fleetform/internal/forge"
	"github.com/fleetform/fleetform/internal/forge/github"
)

// token is the test token; no error may ever show it.
const token = "ghp_fleetformTEST0123456789abcdefABCDEF"

// gitops is the repository of the payloads in testdata (GitHub's documented example).
var gitops = forge.Repo{Owner: "octocat", Name: "Hello-World"}

// fakeGitHub is a GitHub Enterprise Server stand-in: an httptest server that answers under
// /api/v3/, checks the headers of every request, records the requests in order and fails the
// test on any request no handler expects.
type fakeGitHub struct {
	t   *testing.T
	mux *http.ServeMux
	srv *httptest.Server

	mu    sync.Mutex
	calls []string
}

func newFake(t *testing.T) *fakeGitHub {
	t.Helper()
	f := &fakeGitHub{t: t, mux: http.NewServeMux()}
	f.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("unexpected request %s %s", r.Method, r.URL)
		http.NotFound(w, r)
	})
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeGitHub) serve(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	f.calls = append(f.calls, r.Method+" "+r.URL.RequestURI())
	f.mu.Unlock()
	if got := r.Header.Get("Authorization"); got != "Bearer "+token {
		f.t.Errorf("%s %s: Authorization = %q, want the bearer token", r.Method, r.URL, got)
	}
	if got := r.Header.Get("User-Agent"); got != "fleetform" {
		f.t.Errorf("%s %s: User-Agent = %q, want fleetform", r.Method, r.URL, got)
	}
	if got := r.Header.Get("X-Github-Api-Version"); got == "" {
		f.t.Errorf("%s %s: no X-GitHub-Api-Version header", r.Method, r.URL)
	}
	if !strings.HasPrefix(r.URL.Path, "/api/v3/") {
		f.t.Errorf("%s %s: path lacks the GitHub Enterprise prefix /api/v3/", r.Method, r.URL)
		http.NotFound(w, r)
		return
	}
	http.StripPrefix("/api/v3", f.mux).ServeHTTP(w, r)
}

// handle registers h for a ServeMux pattern ("METHOD /repos/...", without /api/v3).
func (f *fakeGitHub) handle(pattern string, h http.HandlerFunc) { f.mux.HandleFunc(pattern, h) }

// client returns a Client on the fake, with WithBaseURL given the server's bare URL (go-github
// appends /api/v3/).
func (f *fakeGitHub) client() *github.Client {
	f.t.Helper()
	c, err := github.New(token, github.WithBaseURL(f.srv.URL))
	if err != nil {
		f.t.Fatalf("New: %v", err)
	}
	return c
}

// requests returns the requests served so far ("METHOD /api/v3/path?query").
func (f *fakeGitHub) requests() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.calls...)
}

// serveFile answers with testdata/name (or no body when name is empty), status and headers.
func serveFile(t *testing.T, w http.ResponseWriter, status int, name string, headers map[string]string) {
	t.Helper()
	for k, v := range headers {
		w.Header().Set(k, v)
	}
	if name == "" {
		w.WriteHeader(status)
		return
	}
	body, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Errorf("read payload: %v", err)
		w.WriteHeader(http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	if _, err := w.Write(body); err != nil {
		t.Errorf("write payload %s: %v", name, err)
	}
}

// checkJSONBody fails the test unless the request body is the JSON value want.
func checkJSONBody(t *testing.T, r *http.Request, want any) {
	t.Helper()
	raw, err := io.ReadAll(r.Body)
	if err != nil {
		t.Errorf("%s %s: read body: %v", r.Method, r.URL, err)
		return
	}
	var got any
	if err := json.Unmarshal(raw, &got); err != nil {
		t.Errorf("%s %s: body %q is not JSON: %v", r.Method, r.URL, raw, err)
		return
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("%s %s: body (-want +got):\n%s", r.Method, r.URL, diff)
	}
}

// checkQuery fails the test unless the request's query is exactly want.
func checkQuery(t *testing.T, r *http.Request, want map[string]string) {
	t.Helper()
	got := map[string]string{}
	for k, vs := range r.URL.Query() {
		got[k] = strings.Join(vs, ",")
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("%s %s: query (-want +got):\n%s", r.Method, r.URL, diff)
	}
}
