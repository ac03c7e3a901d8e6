package host

import (
	"encoding/base64"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync"
	"testing"

	"github.com/fleetform/fleetform/internal/gitauth"
	"github.com/fleetform/fleetform/internal/testutil/gittest"
)

// TestFetchSendsOnlyTheCredentialForItsURL: the agent's fetch sends the credential chosen
// for the repository's URL, and FLEETFORM_GIT_TOKEN alone never goes over plain http.
func TestFetchSendsOnlyTheCredentialForItsURL(t *testing.T) {
	root := t.TempDir()
	r, err := gittest.InitRepo(filepath.Join(root, "gitops.git"), true)
	if err != nil {
		t.Fatal(err)
	}
	r.Commit(t, "dev", map[string]string{"vm-line/README.md": "x\n"})
	var mu sync.Mutex
	var auths []string
	git := gittest.GitHandler(t, root)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		mu.Lock()
		auths = append(auths, req.Header.Get("Authorization"))
		mu.Unlock()
		git.ServeHTTP(w, req)
	}))
	t.Cleanup(srv.Close)
	url := srv.URL + "/gitops.git"
	t.Setenv(gitauth.TokenEnv, "legacy-secret")
	t.Setenv(gitauth.TokenHostsEnv, "")
	t.Setenv("AGENT_GIT_TOKEN", "agent-secret")

	tests := []struct {
		name    string
		entries []gitauth.Entry
		want    string
	}{
		{name: "FLEETFORM_GIT_TOKEN over http", want: ""},
		{name: "an entry for the URL", want: "Basic " + base64.StdEncoding.EncodeToString([]byte("git:agent-secret")),
			entries: []gitauth.Entry{{URL: srv.URL, TokenEnv: "AGENT_GIT_TOKEN", AllowInsecureHTTP: true}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			creds, err := gitauth.New(gitauth.Config{Entries: tt.entries, Trusted: []string{url}})
			if err != nil {
				t.Fatal(err)
			}
			mu.Lock()
			auths = nil
			mu.Unlock()
			f := &fetcher{dir: filepath.Join(t.TempDir(), "gitops.git"), url: url, branch: "dev", creds: creds}
			if _, err := f.fetch(t.Context()); err != nil {
				t.Fatalf("fetch: %v", err)
			}
			mu.Lock()
			defer mu.Unlock()
			if len(auths) == 0 {
				t.Fatal("the server was not asked")
			}
			for _, got := range auths {
				if got != tt.want {
					t.Errorf("Authorization %q, want %q", got, tt.want)
				}
			}
		})
	}
}
