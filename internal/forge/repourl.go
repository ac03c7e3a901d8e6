package forge

import (
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strings"

	"github.com/fleetform/fleetform/internal/redact"
)

// namePattern is what a repository owner or name may contain (GitHub's rule, and a safe one for
// building API paths).
var namePattern = regexp.MustCompile(`^[A-Za-z0-9._-]+$`)

// scpPattern is the scp-like git address "[user@]host:path".
var scpPattern = regexp.MustCompile(`^(?:[^@/:]+@)?([^@/:]+):([^/].*)$`)

// ParseRepoURL extracts owner/name from https://host/owner/name(.git), ssh://git@host/owner/name(.git), git@host:owner/name(.git); error otherwise.
//
// http:// is accepted like https://. host is the host as written, with its port for http(s) (a
// GitHub Enterprise Server on a non-default port) and without it for ssh (the SSH port says
// nothing about the web host). A single trailing slash is tolerated; anything else (more or fewer
// path segments, a query, a fragment, other schemes, local paths) is an error. Errors show the URL
// with its user information (a token, as user name or password) replaced by REDACTED.
func ParseRepoURL(rawURL string) (host string, r Repo, err error) {
	host, path, err := splitRepoURL(rawURL)
	if err != nil {
		return "", Repo{}, fmt.Errorf("repository URL %q: %w", redact.URL(rawURL), err)
	}
	path = strings.TrimSuffix(strings.TrimPrefix(path, "/"), "/")
	path = strings.TrimSuffix(path, ".git")
	owner, name, ok := strings.Cut(path, "/")
	if !ok || strings.Contains(name, "/") {
		return "", Repo{}, fmt.Errorf("repository URL %q: want the path owner/name, got %q", redact.URL(rawURL), path)
	}
	for _, part := range []string{owner, name} {
		if !namePattern.MatchString(part) || part == "." || part == ".." {
			return "", Repo{}, fmt.Errorf("repository URL %q: invalid owner or name %q", redact.URL(rawURL), part)
		}
	}
	return host, Repo{Owner: owner, Name: name}, nil
}

// splitRepoURL returns the host and the raw path of a repository URL.
func splitRepoURL(rawURL string) (host, path string, err error) {
	if !strings.Contains(rawURL, "://") {
		m := scpPattern.FindStringSubmatch(rawURL)
		if m == nil {
			return "", "", errors.New("want https://host/owner/name, ssh://git@host/owner/name or git@host:owner/name")
		}
		return m[1], m[2], nil
	}
	u, err := url.Parse(rawURL)
	if err != nil {
		// url.Error repeats the URL, credentials included: keep only the reason.
		var uerr *url.Error
		if errors.As(err, &uerr) {
			err = uerr.Err
		}
		return "", "", fmt.Errorf("not a valid URL: %w", err)
	}
	if u.RawQuery != "" || u.Fragment != "" || u.Opaque != "" {
		return "", "", errors.New("unexpected query or fragment")
	}
	switch u.Scheme {
	case "https", "http":
		host = u.Host
	case "ssh":
		host = u.Hostname()
	default:
		return "", "", fmt.Errorf("unsupported scheme %q (want https or ssh)", u.Scheme)
	}
	if host == "" {
		return "", "", errors.New("no host")
	}
	return host, u.Path, nil
}
