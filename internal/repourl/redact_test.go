package repourl_test

import (
	"strings"
	"testing"

	"github.com/fleetform/fleetform/internal/repourl"
)

func TestRedact(t *testing.T) {
	tests := map[string]string{
		"https://user:s3cret@github.com/org/repo.git": "https://***@github.com/org/repo.git",
		"https://token@github.com/org/repo":           "https://***@github.com/org/repo",
		"https://github.com/org/repo":                 "https://github.com/org/repo",
		"ssh://git@github.com/org/repo":               "ssh://***@github.com/org/repo",
		"git@github.com:org/repo.git":                 "git@github.com:org/repo.git",
		"/srv/git/repo":                               "/srv/git/repo",
		"file:///srv/git/repo":                        "file:///srv/git/repo",
		"http://u:p%zz@host/x":                        "http://***@host/x",
		"https://host/x.git?token=s3cret&ref=main":    "https://host/x.git?token=***&ref=***",
		"https://u:p@host/x?private_token=s3cret":     "https://***@host/x?private_token=***",
	}
	for in, want := range tests {
		if got := repourl.Redact(in); got != want {
			t.Errorf("URL(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestRedactText: every URL of a message is redacted, as a library printed it (net/http
// prints a request's URL with its user name); the rest is kept.
func TestRedactText(t *testing.T) {
	tests := map[string]string{
		`list the branches of https://***@git.example.com/org/repo: Get "https://ghp_s3cret@git.example.com/org/repo/info/refs?service=git-upload-pack": dial tcp: lookup git.example.com: no such host`: `list the branches of https://***@git.example.com/org/repo: Get "https://***@git.example.com/org/repo/info/refs?service=***": dial tcp: lookup git.example.com: no such host`,
		"fetch (https://u:s3cret@a/x) and 'ssh://git@b/y'": "fetch (https://***@a/x) and 'ssh://***@b/y'",
		"no URL here: a://": "no URL here: a://",
		"plain text":        "plain text",
	}
	for in, want := range tests {
		if got := repourl.RedactText(in); got != want {
			t.Errorf("RedactText(%q)\n = %q\nwant %q", in, got, want)
		}
	}
}

func TestWithoutCredentials(t *testing.T) {
	for _, c := range []struct {
		in, want string
		removed  bool
	}{
		{"https://user:secret@git.example.com/x.git", "https://git.example.com/x.git", true},
		{"https://ghp_token@github.com/org/x", "https://github.com/org/x", true},
		{"https://git.example.com/x.git?token=secret", "https://git.example.com/x.git", true},
		{"ssh://git@git.example.com/x.git", "ssh://git@git.example.com/x.git", false},
		{"ssh://git:secret@git.example.com/x.git", "ssh://git.example.com/x.git", true},
		{"https://git.example.com/x.git", "https://git.example.com/x.git", false},
		{"git@github.com:org/x.git", "git@github.com:org/x.git", false},
		{"/srv/git/x", "/srv/git/x", false},
		// A password with characters a URL may not hold: the URL does not parse, and loses it all the same.
		{"https://oauth2:tok%en@git.example.com/x.git", "https://git.example.com/x.git", true},
		{"https://u:to^ken@git.example.com/x.git", "https://git.example.com/x.git", true},
		{"https://git.example.com/a b", "https://git.example.com/a b", false},
	} {
		got, removed := repourl.WithoutCredentials(c.in)
		if got != c.want || removed != c.removed {
			t.Errorf("WithoutCredentials(%q) = %q, %v; want %q, %v", c.in, got, removed, c.want, c.removed)
		}
		if strings.Contains(got, "secret") || strings.Contains(got, "ghp_") {
			t.Errorf("WithoutCredentials(%q) = %q keeps a credential", c.in, got)
		}
	}
}
