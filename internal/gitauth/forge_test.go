package gitauth_test

import (
	"errors"
	"testing"

	"github.com/fleetform/fleetform/internal/gitauth"
)

// TestForgeToken: the forge token goes only to the API of the repository's host, over
// https unless an entry allows http, and the legacy token only to an API whose host the
// command line names.
func TestForgeToken(t *testing.T) {
	tests := []struct {
		name            string
		trusted         []string
		entries         []gitauth.Entry
		api, repo, want string // want: the token, or "" for ErrNoForgeToken
	}{
		{name: "github.com named on the command line", trusted: []string{"https://github.com/org/cp"},
			api: "https://api.github.com/", repo: "https://github.com/org/gitops", want: "legacy"},
		{name: "github.com named by scp-like URL", trusted: []string{"git@github.com:org/cp.git"},
			api: "https://api.github.com/", repo: "git@github.com:org/gitops.git", want: "legacy"},
		{name: "GitHub Enterprise given with --forge-url", trusted: []string{"https://ghe.example.com/api/v3/"},
			api: "https://ghe.example.com/api/v3/", repo: "https://ghe.example.com/org/gitops", want: "legacy"},
		{name: "a repository host only the control plane names", trusted: []string{"https://github.com/org/cp"},
			api: "https://evil.example/api/v3/", repo: "https://evil.example/org/gitops"},
		{name: "an API that is not the repository host's", trusted: []string{"https://github.com/org/cp", "https://evil.example/api/v3/"},
			api: "https://evil.example/api/v3/", repo: "https://github.com/org/gitops"},
		{name: "an API host that only looks like it", trusted: []string{"https://github.com/org/cp"},
			api: "https://api.github.com.evil.example/", repo: "https://github.com.evil.example/org/gitops"},
		{name: "plain http API named on the command line", trusted: []string{"http://ghe.internal/api/v3/"},
			api: "http://ghe.internal/api/v3/", repo: "http://ghe.internal/org/gitops"},
		{name: "plain http API with an entry that allows it",
			entries: []gitauth.Entry{{URL: "http://ghe.internal/api/", TokenEnv: "GHE_TOKEN", AllowInsecureHTTP: true}},
			api:     "http://ghe.internal/api/v3/", repo: "http://ghe.internal/org/gitops", want: "configured"},
		{name: "configured entry for api.github.com", entries: []gitauth.Entry{{URL: "https://api.github.com", TokenEnv: "GHE_TOKEN"}},
			api: "https://api.github.com/", repo: "https://github.com/org/gitops", want: "configured"},
		{name: "a git entry is not a forge entry", entries: []gitauth.Entry{{URL: "https://github.com", TokenEnv: "GHE_TOKEN"}},
			api: "https://api.github.com/", repo: "https://github.com/org/gitops"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clearEnv(t)
			t.Setenv("FLEETFORM_GITHUB_TOKEN", "legacy")
			t.Setenv("GHE_TOKEN", "configured")
			t.Setenv(gitauth.TokenEnv, "git-token") // never a forge token
			s := newStore(t, gitauth.Config{Trusted: tt.trusted, Entries: tt.entries})
			c, err := s.ForgeToken(t.Context(), tt.api, tt.repo)
			switch {
			case tt.want == "" && !errors.Is(err, gitauth.ErrNoForgeToken):
				t.Errorf("ForgeToken = %v, %v; want ErrNoForgeToken", c, err)
			case tt.want != "" && (err != nil || c.Password != tt.want):
				t.Errorf("ForgeToken = %v, %v; want %q", c, err, tt.want)
			}
		})
	}
}

func TestForgeTokenFallsBackToGITHUBTOKEN(t *testing.T) {
	clearEnv(t)
	t.Setenv("GITHUB_TOKEN", "actions-token")
	s := newStore(t, gitauth.Config{Trusted: []string{"https://github.com/org/cp"}})
	c, err := s.ForgeToken(t.Context(), "https://api.github.com/", "https://github.com/org/gitops")
	if err != nil || c.Password != "actions-token" || c.Source != "env GITHUB_TOKEN" {
		t.Errorf("ForgeToken = %v, %v", c, err)
	}
	t.Setenv("GITHUB_TOKEN", "")
	if _, err := s.ForgeToken(t.Context(), "https://api.github.com/", "https://github.com/org/gitops"); !errors.Is(err, gitauth.ErrNoForgeToken) {
		t.Errorf("without a token: %v", err)
	}
}
