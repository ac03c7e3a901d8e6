package controlplane

import (
	"net/http"
	"strings"
	"testing"

	"github.com/fleetform/fleetform/internal/gitauth"
)

// TestScopedAuthStaysOnItsOrigin: go-git applies the authentication to every request it
// makes, including those after a redirect; the credential goes only to the origin it was
// chosen for.
func TestScopedAuthStaysOnItsOrigin(t *testing.T) {
	t.Setenv("T", "s3cret")
	s, err := gitauth.New(gitauth.Config{Entries: []gitauth.Entry{{URL: "https://git.example.com", TokenEnv: "T"}}})
	if err != nil {
		t.Fatal(err)
	}
	auth, err := httpAuth(t.Context(), s, "https://git.example.com/org/repo.git")
	if err != nil || auth == nil {
		t.Fatalf("httpAuth = %v, %v", auth, err)
	}
	sa := auth.(*scopedAuth)
	for url, want := range map[string]bool{
		"https://git.example.com/org/repo.git/info/refs?service=git-upload-pack": true,
		"https://git.example.com/moved/repo.git/git-upload-pack":                 true,
		"https://evil.example/org/repo.git/git-upload-pack":                      false,
		"http://git.example.com/org/repo.git/git-upload-pack":                    false,
		"https://git.example.com:8443/org/repo.git/git-upload-pack":              false,
	} {
		req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, url, nil)
		if err != nil {
			t.Fatal(err)
		}
		sa.SetAuth(req)
		if _, _, got := req.BasicAuth(); got != want {
			t.Errorf("%s: credential sent %v, want %v", url, got, want)
		}
	}
	if str := sa.String(); str == "" || strings.Contains(str, "s3cret") {
		t.Errorf("String() = %q", str)
	}
	for _, url := range []string{"ssh://git@git.example.com/org/repo", "https://evil.example/org/repo"} {
		if a, err := httpAuth(t.Context(), s, url); a != nil || err != nil {
			t.Errorf("httpAuth(%s) = %v, %v; want none", url, a, err)
		}
	}
}
