package github_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/fleetform/fleetform/internal/forge/github"
)

// authRecorder records the Authorization header of every request it answers.
type authRecorder struct {
	mu    sync.Mutex
	auths []string
}

func (a *authRecorder) record(r *http.Request) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.auths = append(a.auths, r.Header.Get("Authorization"))
}

func (a *authRecorder) seen() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]string(nil), a.auths...)
}

// TestRedirectKeepsTheToken: a redirect to another port (or host, or scheme) is refused and
// the token never reaches it; a redirect on the API's own origin is followed.
func TestRedirectKeepsTheToken(t *testing.T) {
	t.Parallel()
	var other authRecorder
	elsewhere := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		other.record(r)
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, "[]")
	}))
	t.Cleanup(elsewhere.Close)
	var api authRecorder
	var apiURL string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		api.record(r)
		switch {
		case strings.Contains(r.URL.Path, "/repos/octocat/Hello-World/"):
			http.Redirect(w, r, elsewhere.URL+r.URL.RequestURI(), http.StatusMovedPermanently)
		case strings.Contains(r.URL.Path, "/repos/octocat/renamed/"):
			http.Redirect(w, r, apiURL+"/api/v3/repos/octocat/new-name/pulls", http.StatusMovedPermanently)
		default:
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, "[]")
		}
	}))
	t.Cleanup(srv.Close)
	apiURL = srv.URL
	c, err := github.New(token, github.WithBaseURL(srv.URL+"/api/v3/"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.ListOpen(t.Context(), gitops, "main"); err == nil || !strings.Contains(err.Error(), "refusing a redirect") {
		t.Errorf("ListOpen through a redirect to another port = %v, want a refusal", err)
	}
	if got := other.seen(); len(got) != 0 {
		t.Errorf("the other server was asked %d time(s) (Authorization %q)", len(got), got)
	}
	renamed := gitops
	renamed.Name = "renamed"
	if _, err := c.ListOpen(t.Context(), renamed, "main"); err != nil {
		t.Errorf("ListOpen through a redirect on the same origin: %v", err)
	}
	for i, a := range api.seen() {
		if a != "Bearer "+token {
			t.Errorf("API request %d: Authorization %q", i, a)
		}
	}
	if n := len(api.seen()); n != 3 {
		t.Errorf("the API answered %d request(s), want 3", n)
	}
}
