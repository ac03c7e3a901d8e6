package repourl_test

import (
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
	}
	for in, want := range tests {
		if got := repourl.Redact(in); got != want {
			t.Errorf("URL(%q) = %q, want %q", in, got, want)
		}
	}
}
