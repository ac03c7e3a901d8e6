package repourl_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/fleetform/fleetform/internal/repourl"
)

// TestKey: every form of one repository is one key; other repositories, and local paths,
// are others.
func TestKey(t *testing.T) {
	same := []string{"https://github.com/org/repo", "https://github.com/org/repo.git", "https://GitHub.com/org/repo/",
		"git@github.com:org/repo.git", "ssh://git@github.com/org/repo", "http://user:tok@github.com:8443/org/repo", " https://github.com/org/repo "}
	for _, loc := range same {
		if got := repourl.Key(loc); got != "github.com/org/repo" {
			t.Errorf("Key(%q) = %q, want github.com/org/repo", loc, got)
		}
	}
	for _, loc := range []string{"https://github.com/org/other", "https://gitlab.com/org/repo", "https://github.com/Org/repo"} {
		if repourl.Key(loc) == "github.com/org/repo" {
			t.Errorf("Key(%q) is github.com/org/repo's", loc)
		}
	}
	abs, err := filepath.Abs("some/dir")
	if err != nil {
		t.Fatal(err)
	}
	if got := repourl.Key("./some/dir/"); got != "file:"+abs {
		t.Errorf("Key of a relative path = %q, want file:%s", got, abs)
	}
}

func TestTrimAndLocalPath(t *testing.T) {
	for in, want := range map[string]string{" https://h/o/r.git/ ": "https://h/o/r", "https://h/o/r": "https://h/o/r", "/srv/x.git": "/srv/x"} {
		if got := repourl.Trim(in); got != want {
			t.Errorf("Trim(%q) = %q, want %q", in, got, want)
		}
	}
	for loc, local := range map[string]bool{"/srv/x": true, "rel/x": true, "file:///srv/x": true, "https://h/x": false, "git@h:o/r": false} {
		if _, ok := repourl.LocalPath(loc); ok != local {
			t.Errorf("LocalPath(%q) local = %v, want %v", loc, ok, local)
		}
	}
}

func TestSplit(t *testing.T) {
	for raw, want := range map[string][2]string{
		"https://ghe.example.com:8443/org/repo.git": {"ghe.example.com:8443", "/org/repo.git"},
		"ssh://git@github.com:22/org/repo":          {"github.com", "/org/repo"},
		"git@github.com:org/repo.git":               {"github.com", "org/repo.git"},
	} {
		host, path, err := repourl.Split(raw)
		if err != nil || host != want[0] || path != want[1] {
			t.Errorf("Split(%q) = %q, %q, %v; want %q, %q", raw, host, path, err, want[0], want[1])
		}
	}
	for _, raw := range []string{"/local/path", "ftp://h/o/r", "https://h/o/r?x=1", "https:///o/r"} {
		if _, _, err := repourl.Split(raw); err == nil {
			t.Errorf("Split(%q): want an error", raw)
		}
	}
}

// FuzzKey: no location makes Key or Split panic; white space around it changes nothing; a
// remote URL Split accepts with a plain host name has that name, in lower case, at the
// start of its key. (A location LocalPath takes for a path, "host:path" without a user, is
// a path for Key.)
func FuzzKey(f *testing.F) {
	for _, s := range []string{"https://github.com/org/repo.git", "git@host:o/r", "/srv/x", "ssh://u@h:22/x", "http://[::1]:80/x", "file:///x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		key := repourl.Key(raw)
		if again := repourl.Key(" " + raw + "\n"); again != key && !strings.HasPrefix(key, "file:") {
			t.Errorf("Key(%q) = %q, but with white space around it %q", raw, key, again)
		}
		raw = strings.TrimSpace(raw)
		host, _, err := repourl.Split(raw)
		if _, local := repourl.LocalPath(raw); err != nil || local || strings.ContainsAny(host, "[]:%") {
			return
		}
		if !strings.HasPrefix(key, strings.ToLower(host)+"/") {
			t.Errorf("Key(%q) = %q does not start with the host %q", raw, key, host)
		}
	})
}
