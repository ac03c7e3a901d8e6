package gitauth

import (
	"errors"
	"fmt"
	"net/netip"
	"net/url"
	"path"
	"strconv"
	"strings"
)

// origin is the scheme, host and port a request goes to, normalised: scheme and host in
// ASCII lower case, an IP literal in its canonical form, the port always present (the
// scheme's default when the URL gives none, without leading zeroes).
type origin struct {
	scheme string // "http" or "https"
	host   string
	port   string
}

// String returns scheme://host[:port] (an IPv6 host in brackets, the scheme's default port
// left out).
func (o origin) String() string {
	host := o.host
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	if (o.scheme == "https" && o.port == "443") || (o.scheme == "http" && o.port == "80") {
		return o.scheme + "://" + host
	}
	return o.scheme + "://" + host + ":" + o.port
}

// prefix is a normalised credential scope: an origin and a path prefix that ends with "/"
// ("/" alone for a whole host).
type prefix struct {
	origin
	path string
}

// String returns the prefix as a URL.
func (p prefix) String() string { return p.origin.String() + p.path }

// target is a normalised request URL. clean is false when its path has "." or ".."
// segments, empty segments, or an encoded slash or backslash: such a path is matched only
// by whole-host prefixes, since servers disagree on what it names.
type target struct {
	origin
	path  string
	clean bool
}

// parsePrefix normalises the URL of a credential entry: http or https, a host, an optional
// port and a clean path; no user information, query or fragment.
func parsePrefix(raw string) (prefix, error) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		var uerr *url.Error
		if errors.As(err, &uerr) {
			err = uerr.Err // url.Error repeats the URL
		}
		return prefix{}, fmt.Errorf("not a URL: %w", err)
	}
	switch {
	case u.User != nil:
		return prefix{}, errors.New("user information is not allowed in the URL (use username)")
	case u.Opaque != "" || u.RawQuery != "" || u.Fragment != "" || u.ForceQuery:
		return prefix{}, errors.New("want scheme://host[:port][/path], without query or fragment")
	}
	o, err := parseOrigin(u)
	if err != nil {
		return prefix{}, err
	}
	p, clean := normalisePath(u)
	if !clean {
		return prefix{}, errors.New(`the path must not hold ".", "..", empty segments, encoded slashes or backslashes`)
	}
	return prefix{origin: o, path: p}, nil
}

// parseTarget normalises a request URL; ok is false for a URL that gets no configured
// credential at all: not http(s), no host, or user information of its own.
func parseTarget(raw string) (t target, ok bool) {
	u, err := url.Parse(raw)
	if err != nil || u.User != nil || u.Opaque != "" {
		return target{}, false
	}
	return targetOf(u)
}

// targetOf is parseTarget for a parsed URL.
func targetOf(u *url.URL) (target, bool) {
	o, err := parseOrigin(u)
	if err != nil {
		return target{}, false
	}
	p, clean := normalisePath(u)
	return target{origin: o, path: p, clean: clean}, true
}

func parseOrigin(u *url.URL) (origin, error) {
	scheme := asciiLower(u.Scheme)
	if scheme != "http" && scheme != "https" {
		return origin{}, fmt.Errorf("want an http or https URL, not %q", u.Scheme)
	}
	host := u.Hostname()
	if host == "" {
		return origin{}, errors.New("the URL has no host")
	}
	if addr, err := netip.ParseAddr(host); err == nil {
		host = addr.String()
	} else {
		host = asciiLower(host)
	}
	port := strings.TrimLeft(u.Port(), "0")
	switch {
	case u.Port() == "" && scheme == "https":
		port = "443"
	case u.Port() == "":
		port = "80"
	case port == "":
		port = "0"
	}
	if n, err := strconv.Atoi(port); err != nil || n > 65535 {
		return origin{}, fmt.Errorf("invalid port %q", u.Port())
	}
	return origin{scheme: scheme, host: host, port: port}, nil
}

// normalisePath returns the URL's path as a prefix ("/" terminated, a trailing ".git" of
// the last segment removed, so that .../repo and .../repo.git are one repository) and
// whether it was clean.
func normalisePath(u *url.URL) (string, bool) {
	raw := u.EscapedPath()
	p := u.Path
	if p == "" {
		p = "/"
	}
	if !strings.HasPrefix(p, "/") {
		return "/", false
	}
	lowerRaw := asciiLower(raw)
	clean := !strings.Contains(lowerRaw, "%2f") && !strings.Contains(lowerRaw, "%5c") && !strings.Contains(p, `\`)
	trimmed := strings.TrimSuffix(p, "/")
	if trimmed == "" {
		trimmed = "/"
	}
	if path.Clean(p) != trimmed {
		clean = false
	}
	if trimmed == "/" {
		return "/", clean
	}
	return strings.TrimSuffix(trimmed, ".git") + "/", clean
}

// matches reports whether the prefix covers t: the same origin, and the prefix's path is t's
// path or a parent of it, on a segment boundary. A path that is not clean is covered only
// by a whole-host prefix.
func (p prefix) matches(t target) bool {
	if p.origin != t.origin {
		return false
	}
	if p.path == "/" {
		return true
	}
	return t.clean && strings.HasPrefix(t.path, p.path)
}

// asciiLower folds ASCII letters only: Unicode case mapping could merge host names DNS
// keeps apart.
func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}
