package gitauth_test

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fleetform/fleetform/internal/gitauth"
)

// clearEnv unsets the compatibility variables for one test.
func clearEnv(t *testing.T) {
	t.Helper()
	for _, k := range []string{gitauth.TokenEnv, gitauth.UsernameEnv, gitauth.TokenHostsEnv, "FLEETFORM_GITHUB_TOKEN", "GITHUB_TOKEN"} {
		t.Setenv(k, "")
	}
}

func newStore(t *testing.T, cfg gitauth.Config) *gitauth.Store {
	t.Helper()
	s, err := gitauth.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// who returns "user:password from source" for the credential of url, "" for none.
func who(t *testing.T, s *gitauth.Store, url string) string {
	t.Helper()
	c, err := s.For(t.Context(), url)
	if err != nil {
		t.Fatalf("For(%s): %v", url, err)
	}
	if c == nil {
		return ""
	}
	return c.Username + ":" + c.Password + " from " + c.Source
}

func TestForChoosesTheLongestPrefix(t *testing.T) {
	clearEnv(t)
	t.Setenv("HOST_TOKEN", "host-secret")
	t.Setenv("TEAM_TOKEN", "team-secret")
	t.Setenv("INTERNAL_TOKEN", "internal-secret")
	file := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(file, []byte("file-secret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s := newStore(t, gitauth.Config{Entries: []gitauth.Entry{
		{URL: "https://git.example.com", TokenEnv: "HOST_TOKEN"},
		{URL: "https://git.example.com/team/", TokenEnv: "TEAM_TOKEN", Username: "bot"},
		{URL: "https://git.example.com/team/special.git", TokenFile: file},
		{URL: "http://git.internal:8080", TokenEnv: "INTERNAL_TOKEN", AllowInsecureHTTP: true},
	}})
	tests := map[string]string{
		"https://git.example.com/other/repo":        "git:host-secret from env HOST_TOKEN",
		"https://git.example.com/team/repo":         "bot:team-secret from env TEAM_TOKEN",
		"https://GIT.example.com:443/team/repo.git": "bot:team-secret from env TEAM_TOKEN",
		"https://git.example.com/team/special":      "git:file-secret from file " + file,
		"https://git.example.com/teams/repo":        "git:host-secret from env HOST_TOKEN",
		"https://git.example.com/team/../x":         "git:host-secret from env HOST_TOKEN",
		"http://git.example.com/team/repo":          "",
		"https://git.example.com.evil.com/team/x":   "",
		"https://x:y@git.example.com/team/repo":     "",
		"ssh://git@git.example.com/team/repo":       "",
		"http://git.internal:8080/repo":             "git:internal-secret from env INTERNAL_TOKEN",
		"https://git.internal:8080/repo":            "",
		"http://git.internal/repo":                  "",
		"https://github.com/org/repo":               "",
	}
	for url, want := range tests {
		if got := who(t, s, url); got != want {
			t.Errorf("%s: %q, want %q", url, got, want)
		}
	}
}

func TestNewRefusesBadEntries(t *testing.T) {
	clearEnv(t)
	tests := []struct {
		entry gitauth.Entry
		want  string
	}{
		{gitauth.Entry{URL: "https://h", TokenEnv: "A", TokenFile: "f"}, "exactly one of tokenEnv and tokenFile"},
		{gitauth.Entry{URL: "https://h"}, "exactly one of tokenEnv and tokenFile"},
		{gitauth.Entry{URL: "http://h", TokenEnv: "A"}, "allowInsecureHTTP"},
		{gitauth.Entry{URL: "https://h", TokenEnv: "A", AllowInsecureHTTP: true}, "for http:// URLs only"},
		{gitauth.Entry{URL: "h", TokenEnv: "A"}, "want an http or https URL"},
		{gitauth.Entry{URL: "https://u:secret@h", TokenEnv: "A"}, "user information"},
	}
	for _, tt := range tests {
		_, err := gitauth.New(gitauth.Config{Entries: []gitauth.Entry{tt.entry}})
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%+v: %v, want %q", tt.entry, err, tt.want)
		}
		if err != nil && strings.Contains(err.Error(), "secret") {
			t.Errorf("the error shows the secret: %v", err)
		}
	}
	_, err := gitauth.New(gitauth.Config{Entries: []gitauth.Entry{
		{URL: "https://h/team", TokenEnv: "A"}, {URL: "https://H:443/team/", TokenEnv: "B"}}})
	if err == nil || !strings.Contains(err.Error(), "credentials[1]") || !strings.Contains(err.Error(), "same URL") {
		t.Errorf("duplicate entries: %v", err)
	}
}

func TestForFailsOnAMissingSecret(t *testing.T) {
	clearEnv(t)
	t.Setenv("EMPTY_TOKEN", "")
	s := newStore(t, gitauth.Config{Entries: []gitauth.Entry{
		{URL: "https://a.example", TokenEnv: "EMPTY_TOKEN"},
		{URL: "https://b.example", TokenFile: filepath.Join(t.TempDir(), "missing")},
	}})
	for url, want := range map[string]string{"https://a.example/r": "EMPTY_TOKEN is empty", "https://b.example/r": "read token file"} {
		if _, err := s.For(t.Context(), url); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", url, err, want)
		}
	}
}

// TestLegacyToken: FLEETFORM_GIT_TOKEN goes, over https only, to the hosts in
// FLEETFORM_GIT_TOKEN_HOSTS, or else to the hosts of the URLs named on the command line;
// never to a host only the control plane names.
func TestLegacyToken(t *testing.T) {
	tests := []struct {
		name    string
		hosts   string
		trusted []string
		want    map[string]bool // URL -> gets the token
	}{
		{name: "nothing named", want: map[string]bool{"https://github.com/org/r": false}},
		{name: "https control plane", trusted: []string{"https://github.com/org/cp", "/local/gitops", "."},
			want: map[string]bool{
				"https://github.com/org/app":          true,
				"https://github.com/other/app":        true,
				"http://github.com/org/app":           false,
				"https://github.com:8443/org/app":     false,
				"https://github.com.evil.com/org/app": false,
				"https://evil.example/org/app":        false,
				"https://api.github.com/":             false,
			}},
		{name: "scp-like and ssh URLs name their host", trusted: []string{"git@github.com:org/cp.git", "ssh://git@ghe.example.com:2222/org/gitops"},
			want: map[string]bool{"https://github.com/org/app": true, "https://ghe.example.com/org/x": true, "https://ghe.example.com:2222/org/x": false}},
		{name: "http control plane", trusted: []string{"http://git.internal/cp"},
			want: map[string]bool{"http://git.internal/app": false, "https://git.internal/app": false}},
		{name: "hosts listed", hosts: "github.com, https://git.example.com/team/", trusted: []string{"https://other.example/cp"},
			want: map[string]bool{
				"https://github.com/org/app":        true,
				"https://git.example.com/team/app":  true,
				"https://git.example.com/other/app": false,
				"https://other.example/cp":          false, // the list replaces the command-line hosts
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clearEnv(t)
			t.Setenv(gitauth.TokenEnv, "legacy-secret")
			t.Setenv(gitauth.TokenHostsEnv, tt.hosts)
			s := newStore(t, gitauth.Config{Trusted: tt.trusted})
			for url, want := range tt.want {
				if got := who(t, s, url); (got != "") != want || (want && got != "git:legacy-secret from env FLEETFORM_GIT_TOKEN") {
					t.Errorf("%s: %q, want the token: %v", url, got, want)
				}
			}
		})
	}
}

func TestLegacyTokenRefusesHTTPHosts(t *testing.T) {
	clearEnv(t)
	t.Setenv(gitauth.TokenEnv, "legacy-secret")
	t.Setenv(gitauth.TokenHostsEnv, "http://git.internal")
	if _, err := gitauth.New(gitauth.Config{}); err == nil || !strings.Contains(err.Error(), "never sent over plain http") {
		t.Errorf("New = %v, want a refusal of the http host", err)
	}
}

func TestConfiguredEntryWinsOverLegacy(t *testing.T) {
	clearEnv(t)
	t.Setenv(gitauth.TokenEnv, "legacy-secret")
	t.Setenv(gitauth.UsernameEnv, "legacy-user")
	t.Setenv("GH_TOKEN", "configured-secret")
	s := newStore(t, gitauth.Config{Trusted: []string{"https://github.com/org/cp", "https://ghe.example.com/org/gitops"},
		Entries: []gitauth.Entry{{URL: "https://github.com", TokenEnv: "GH_TOKEN"}}})
	if got := who(t, s, "https://github.com/org/app"); got != "git:configured-secret from env GH_TOKEN" {
		t.Errorf("github.com: %q", got)
	}
	if got := who(t, s, "https://ghe.example.com/org/gitops"); got != "legacy-user:legacy-secret from env FLEETFORM_GIT_TOKEN" {
		t.Errorf("ghe.example.com: %q", got)
	}
}

func TestCredentialUseIsLoggedWithoutTheSecret(t *testing.T) {
	clearEnv(t)
	t.Setenv("TEAM_TOKEN", "team-secret")
	var logs bytes.Buffer
	s := newStore(t, gitauth.Config{Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		Entries: []gitauth.Entry{{URL: "https://git.example.com/team/", TokenEnv: "TEAM_TOKEN"}}})
	c, err := s.For(t.Context(), "https://git.example.com/team/repo")
	if err != nil || c == nil {
		t.Fatalf("For = %v, %v", c, err)
	}
	line := logs.String()
	for _, want := range []string{`msg="credential used"`, "host=https://git.example.com", "credential=https://git.example.com/team/", `source="env TEAM_TOKEN"`} {
		if !strings.Contains(line, want) {
			t.Errorf("log %q lacks %q", line, want)
		}
	}
	slog.New(slog.NewTextHandler(&logs, nil)).Info("as a value", "c", c, "v", *c)
	for _, shown := range []string{logs.String(), c.String(), fmt.Sprintf("%v %+v %#v %s", c, *c, *c, c)} {
		if strings.Contains(shown, "team-secret") {
			t.Errorf("the secret is shown: %s", shown)
		}
	}
}

func TestCovers(t *testing.T) {
	clearEnv(t)
	t.Setenv("T", "s")
	s := newStore(t, gitauth.Config{Entries: []gitauth.Entry{{URL: "https://git.example.com/team/", TokenEnv: "T"}}})
	c, err := s.For(t.Context(), "https://git.example.com/team/repo")
	if err != nil || c == nil {
		t.Fatalf("For = %v, %v", c, err)
	}
	for raw, want := range map[string]bool{
		"https://git.example.com/team/repo/info/refs?service=git-upload-pack": true,
		"https://git.example.com:443/team/repo/git-upload-pack":               true,
		"http://git.example.com/team/repo/info/refs":                          false,
		"https://git.example.com:8443/team/repo/info/refs":                    false,
		"https://evil.example/team/repo/info/refs":                            false,
		"https://u@git.example.com/team/repo/info/refs":                       false,
	} {
		u, err := url.Parse(raw)
		if err != nil {
			t.Fatal(err)
		}
		if got := c.Covers(u); got != want {
			t.Errorf("Covers(%s) = %v, want %v", raw, got, want)
		}
	}
}

func TestGitEnv(t *testing.T) {
	clearEnv(t)
	t.Setenv("T", "s3cret")
	s := newStore(t, gitauth.Config{Entries: []gitauth.Entry{{URL: "https://git.example.com", TokenEnv: "T", Username: "bot"}}})
	const remote = "https://git.example.com/org/gitops.git"
	c, err := s.For(t.Context(), remote)
	if err != nil || c == nil {
		t.Fatalf("For = %v, %v", c, err)
	}
	env := []string{"HOME=/h", "GIT_CONFIG_COUNT=1", "GIT_CONFIG_KEY_0=user.name", "GIT_CONFIG_VALUE_0=me"}
	got := gitauth.GitEnv(env, remote, c)
	want := []string{"HOME=/h", "GIT_CONFIG_KEY_0=user.name", "GIT_CONFIG_VALUE_0=me",
		"GIT_CONFIG_KEY_1=http." + remote + ".extraHeader",
		"GIT_CONFIG_VALUE_1=Authorization: Basic " + base64.StdEncoding.EncodeToString([]byte("bot:s3cret")),
		"GIT_CONFIG_KEY_2=http." + remote + ".followRedirects", "GIT_CONFIG_VALUE_2=false",
		"GIT_CONFIG_COUNT=3"}
	if !slices.Equal(got, want) {
		t.Errorf("GitEnv =\n%q\nwant\n%q", got, want)
	}
	if got := gitauth.GitEnv(env, remote, nil); !slices.Equal(got, env) {
		t.Errorf("GitEnv without a credential = %q", got)
	}
}
