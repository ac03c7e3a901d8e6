package forge_test

import (
	"strings"
	"testing"

	"github.com/fleetform/fleetform/internal/forge"
)

func TestParseRepoURL(t *testing.T) {
	t.Parallel()
	tests := []struct {
		url      string
		wantHost string
		want     forge.Repo
	}{
		{"https://github.com/contoso/gitops", "github.com", forge.Repo{Owner: "contoso", Name: "gitops"}},
		{"https://github.com/contoso/gitops.git", "github.com", forge.Repo{Owner: "contoso", Name: "gitops"}},
		{"https://github.com/contoso/gitops/", "github.com", forge.Repo{Owner: "contoso", Name: "gitops"}},
		{"https://x-access-token@github.com/contoso/kalypso-gitops.git", "github.com", forge.Repo{Owner: "contoso", Name: "kalypso-gitops"}},
		{"http://ghe.example.com:8443/platform/fleet.gitops.git", "ghe.example.com:8443", forge.Repo{Owner: "platform", Name: "fleet.gitops"}},
		{"ssh://git@github.com/contoso/gitops.git", "github.com", forge.Repo{Owner: "contoso", Name: "gitops"}},
		{"ssh://git@ghe.example.com:2222/contoso/gitops", "ghe.example.com", forge.Repo{Owner: "contoso", Name: "gitops"}},
		{"git@github.com:contoso/gitops.git", "github.com", forge.Repo{Owner: "contoso", Name: "gitops"}},
		{"git@github.com:contoso/gitops", "github.com", forge.Repo{Owner: "contoso", Name: "gitops"}},
		{"github.com:contoso/gitops.git", "github.com", forge.Repo{Owner: "contoso", Name: "gitops"}},
		{"org-123@ssh.github.com:Contoso/Git_Ops.git", "ssh.github.com", forge.Repo{Owner: "Contoso", Name: "Git_Ops"}},
	}
	for _, tt := range tests {
		t.Run(tt.url, func(t *testing.T) {
			t.Parallel()
			host, got, err := forge.ParseRepoURL(tt.url)
			if err != nil {
				t.Fatalf("ParseRepoURL(%q): %v", tt.url, err)
			}
			if host != tt.wantHost || got != tt.want {
				t.Errorf("ParseRepoURL(%q) = %q, %+v; want %q, %+v", tt.url, host, got, tt.wantHost, tt.want)
			}
		})
	}
}

func TestParseRepoURLErrors(t *testing.T) {
	t.Parallel()
	for _, url := range []string{
		"",
		"contoso/gitops",
		"/srv/git/gitops.git",
		"file:///srv/git/contoso/gitops.git",
		"git://github.com/contoso/gitops.git",
		"https://github.com/contoso",
		"https://github.com/contoso/",
		"https://github.com/contoso/gitops/tree/main",
		"https://github.com/contoso/gitops?tab=readme",
		"https://github.com/contoso/gitops#readme",
		"https:///contoso/gitops",
		"https://github.com//gitops",
		"https://github.com/contoso/.git",
		"https://github.com/contoso/..",
		"https://github.com/con%20toso/gitops",
		"ssh://git@github.com/contoso",
		"git@github.com:contoso",
		"git@github.com:/contoso/gitops.git",
		"git@github.com:contoso/gitops/extra",
		"git@:contoso/gitops",
		"https://github.com/%zz/gitops",
	} {
		t.Run(url, func(t *testing.T) {
			t.Parallel()
			host, r, err := forge.ParseRepoURL(url)
			if err == nil {
				t.Errorf("ParseRepoURL(%q) = %q, %+v; want an error", url, host, r)
			}
		})
	}
}

func TestRepoString(t *testing.T) {
	t.Parallel()
	if got := (forge.Repo{Owner: "contoso", Name: "gitops"}).String(); got != "contoso/gitops" {
		t.Errorf("String() = %q, want contoso/gitops", got)
	}
}

func TestParseRepoURLErrorsHideCredentials(t *testing.T) {
	t.Parallel()
	const secret = "ghp_s3cr3tT0ken"
	for _, url := range []string{
		"https://x-access-token:" + secret + "@github.com/contoso",
		"https://" + secret + "@github.com/contoso/gitops/extra",
		"https://" + secret + "@github.com/%zz/gitops",
		"https://x:" + secret + "@github.com/contoso/gitops?x=1",
		"ftp://user:" + secret + "@github.com/contoso/gitops",
	} {
		_, _, err := forge.ParseRepoURL(url)
		if err == nil {
			t.Errorf("ParseRepoURL(%q): want an error", url)
			continue
		}
		if strings.Contains(err.Error(), secret) {
			t.Errorf("ParseRepoURL error leaks the credentials: %v", err)
		}
		if !strings.Contains(err.Error(), "***@github.com") {
			t.Errorf("ParseRepoURL error %q does not show the redacted URL", err)
		}
	}
}
