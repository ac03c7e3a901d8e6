package controlplane_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fleetform/fleetform/internal/controlplane"
	"github.com/fleetform/fleetform/internal/testutil/gittest"
)

// TestRefs: a repository's branches are read without fetching: locally, over HTTP (as
// git ls-remote), and for a plain directory a fingerprint that changes with its files.
func TestRefs(t *testing.T) {
	t.Parallel()
	r := gittest.NewBare(t)
	main1 := r.Commit(t, "main", map[string]string{"a.yaml": "a: 1\n"})
	dev := r.Commit(t, "dev", map[string]string{"a.yaml": "a: 2\n"})
	rs := controlplane.NewRepos(nil, nil, nil)
	for name, url := range map[string]string{"path": r.Dir, "file": r.URL(), "http": gittest.ServeRepo(t, r)} {
		got, err := rs.Refs(t.Context(), url)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got["main"] != main1.String() || got["dev"] != dev.String() {
			t.Errorf("%s: refs %v, want main %s and dev %s", name, got, main1, dev)
		}
	}
	main2 := r.Commit(t, "main", map[string]string{"a.yaml": "a: 3\n"})
	if got, err := rs.Refs(t.Context(), r.Dir); err != nil || got["main"] != main2.String() {
		t.Errorf("after a commit: %v, %v; want main %s (read afresh)", got, err, main2)
	}

	dir := t.TempDir()
	f := filepath.Join(dir, "x.yaml")
	if err := os.WriteFile(f, []byte("x: 1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	before, err := rs.Refs(t.Context(), dir)
	if err != nil {
		t.Fatal(err)
	}
	again, _ := rs.Refs(t.Context(), dir)
	if before[controlplane.DirRef] == "" || again[controlplane.DirRef] != before[controlplane.DirRef] {
		t.Errorf("directory fingerprint %v then %v: want one, stable", before, again)
	}
	later := time.Now().Add(time.Minute)
	if err := os.WriteFile(f, []byte("x: 22\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_ = os.Chtimes(f, later, later)
	after, _ := rs.Refs(t.Context(), dir)
	if after[controlplane.DirRef] == before[controlplane.DirRef] {
		t.Error("the fingerprint did not change with the file")
	}
}

// TestTokenInURLStaysOutOfErrors: a token written as a repository URL's user name (or
// password) still authenticates, and no error of a failed fetch or listing carries it
// (go-git and net/http print a request's URL with its user name).
func TestTokenInURLStaysOutOfErrors(t *testing.T) {
	t.Parallel()
	r := gittest.NewBare(t)
	main := r.Commit(t, "main", map[string]string{"a.yaml": "a: 1\n"})
	served := gittest.ServeGitAuth(t, filepath.Dir(r.Dir), "ghp_s3cret", "") + "/" + filepath.Base(r.Dir)
	withToken := strings.Replace(served, "http://", "http://ghp_s3cret@", 1)
	rs := controlplane.NewRepos(nil, nil, nil)
	if got, err := rs.Refs(t.Context(), withToken); err != nil || got["main"] != main.String() {
		t.Fatalf("Refs with the token in the URL: %v, %v; want main %s", got, err, main)
	}
	if _, err := rs.Open(t.Context(), withToken); err != nil {
		t.Fatalf("Open with the token in the URL: %v", err)
	}

	closed := gittest.ClosedURL(t)
	for _, url := range []string{
		strings.Replace(closed, "http://", "http://ghp_s3cret@", 1) + "/org/repo",
		strings.Replace(closed, "http://", "http://x-access-token:ghp_s3cret@", 1) + "/org/repo",
	} {
		_, refsErr := rs.Refs(t.Context(), url)
		_, openErr := rs.Open(t.Context(), url)
		for what, err := range map[string]error{"Refs": refsErr, "Open": openErr} {
			if err == nil || strings.Contains(err.Error(), "s3cret") {
				t.Errorf("%s(%s): error %v; want one without the token", what, repourlRedacted(url), err)
			}
		}
	}
}

// repourlRedacted names a test URL without its token, for a failure message.
func repourlRedacted(url string) string { return strings.ReplaceAll(url, "s3cret", "***") }
