package forge

import (
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/fleetform/fleetform/internal/repourl"
)

// namePattern is what a repository owner or name may contain (GitHub's rule, and a safe one for
// building API paths).
var namePattern = regexp.MustCompile(`^[A-Za-z0-9._-]+$`)

// ParseRepoURL extracts owner/name from https://host/owner/name(.git), ssh://git@host/owner/name(.git), git@host:owner/name(.git); error otherwise.
//
// http:// is accepted like https://. host is the host as written, with its port for http(s) (a
// GitHub Enterprise Server on a non-default port) and without it for ssh (the SSH port says
// nothing about the web host). A single trailing slash is tolerated; anything else (more or fewer
// path segments, a query, a fragment, other schemes, local paths) is an error. Errors show the URL
// with its user information (a token, as user name or password) replaced by REDACTED.
func ParseRepoURL(rawURL string) (host string, r Repo, err error) {
	host, path, err := repourl.Split(rawURL)
	if err == nil && !strings.Contains(rawURL, "://") && strings.HasPrefix(path, "/") {
		err = errors.New("want https://host/owner/name, ssh://git@host/owner/name or git@host:owner/name") // no absolute scp path
	}
	if err != nil {
		return "", Repo{}, fmt.Errorf("repository URL %q: %w", repourl.Redact(rawURL), err)
	}
	path = strings.TrimSuffix(strings.TrimPrefix(path, "/"), "/")
	path = strings.TrimSuffix(path, ".git")
	owner, name, ok := strings.Cut(path, "/")
	if !ok || strings.Contains(name, "/") {
		return "", Repo{}, fmt.Errorf("repository URL %q: want the path owner/name, got %q", repourl.Redact(rawURL), path)
	}
	for _, part := range []string{owner, name} {
		if !namePattern.MatchString(part) || part == "." || part == ".." {
			return "", Repo{}, fmt.Errorf("repository URL %q: invalid owner or name %q", repourl.Redact(rawURL), part)
		}
	}
	return host, Repo{Owner: owner, Name: name}, nil
}
