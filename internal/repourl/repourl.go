// Package repourl is what fleetform knows of a repository's location: whether it is a local
// path (LocalPath), the URL as written without what does not change the repository (Trim),
// which repository it names whatever the form it is written in (Key),
// the host and path of a URL (Split), and the location as it may be shown (Redact: without
// credentials).
package repourl

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"path"
	"path/filepath"
	"regexp"
	"strings"
)

// LocalPath returns the path of a local location (a path, or a file:// URL), and false for a
// remote one (a URL with a scheme, or scp-like user@host:path).
func LocalPath(loc string) (path string, ok bool) {
	if p, ok := strings.CutPrefix(loc, "file://"); ok {
		return p, true
	}
	if strings.Contains(loc, "://") || (strings.Contains(loc, "@") && strings.Contains(loc, ":")) {
		return "", false
	}
	return loc, true
}

// Trim is a repository URL (or path) as written, without surrounding white space, a
// trailing "/" or ".git": https://host/org/repo.git/ and https://host/org/repo are one.
func Trim(loc string) string {
	return strings.TrimSuffix(strings.TrimSuffix(strings.TrimSpace(loc), "/"), ".git")
}

// Key identifies a repository whatever form names it: https://host/org/repo,
// https://host/org/repo.git/, git@host:org/repo.git and ssh://git@host/org/repo are one key
// (the host in lower case, no scheme, user, port, trailing slash or .git); a local path is
// its cleaned absolute path. Surrounding white space is ignored.
func Key(loc string) string {
	loc = strings.TrimSpace(loc)
	if p, ok := LocalPath(loc); ok {
		if abs, err := filepath.Abs(p); err == nil {
			p = abs
		}
		return "file:" + filepath.Clean(p)
	}
	host, p, err := Split(loc)
	if err != nil { // another scheme, a query: the URL's own host and path
		if u, uerr := url.Parse(loc); uerr == nil {
			host, p = u.Host, u.Path
		}
	}
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	return strings.ToLower(host) + "/" + Trim(strings.Trim(path.Clean("/"+p), "/"))
}

// scpPattern is the scp-like git address "[user@]host:path" (a path not starting with //).
var scpPattern = regexp.MustCompile(`^(?:[^@/:\\]+@)?([^@/:\\]+):(/?[^/].*)$`)

// Split returns the host and the raw path of a repository URL: https://host/owner/name(.git),
// ssh://git@host/owner/name(.git) or git@host:owner/name(.git). http:// is accepted like
// https://. host is the host as written, with its port for http(s) (a server on a
// non-default port) and without it for ssh (the SSH port says nothing about the web host).
// A query, a fragment, another scheme or a local path is an error.
func Split(rawURL string) (host, path string, err error) {
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
