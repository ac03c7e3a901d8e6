// Package gitauth decides which credential, if any, goes with a request to a git
// repository or a forge API, and reads its secret.
//
// A credential is scoped to a URL prefix (a host, or a path on it) and is sent only to URLs
// under that prefix, never over plain HTTP unless its entry allows it, and never to a host
// no entry names. The entries come from the config file (Entry) and, for compatibility,
// from FLEETFORM_GIT_TOKEN, which goes only to the hosts FLEETFORM_GIT_TOKEN_HOSTS lists or,
// without it, to the hosts of the repositories named on the command line (see New).
package gitauth

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os"
	"slices"
	"strings"

	"github.com/fleetform/fleetform/internal/repourl"
)

// The environment variables of the compatibility credential.
const (
	// TokenEnv holds a token sent, over HTTPS only, to the hosts TokenHostsEnv lists or,
	// without it, to the hosts of the repositories named on the command line.
	TokenEnv = "FLEETFORM_GIT_TOKEN" //nolint:gosec // the variable's name, not a token
	// UsernameEnv is the user name sent with TokenEnv's token (default "git").
	UsernameEnv = "FLEETFORM_GIT_USERNAME"
	// TokenHostsEnv lists, separated by commas or spaces, the HTTPS hosts or URL prefixes
	// TokenEnv's token is sent to ("github.com", "https://git.example.com/team/").
	TokenHostsEnv = "FLEETFORM_GIT_TOKEN_HOSTS" //nolint:gosec // the variable's name, not a token
)

// defaultUsername is the user name sent with a token when none is configured (servers
// that authenticate by token ignore it, but HTTP Basic needs one).
const defaultUsername = "git"

// maxTokenFile bounds what is read from a token file.
const maxTokenFile = 64 << 10

// Entry is one configured credential.
type Entry struct {
	// URL is the scope: a host ("https://github.com") or a URL prefix
	// ("https://git.example.com/team/"). Scheme, host and port must match a request exactly
	// (host case-insensitively, default ports implied); the path matches whole segments.
	URL string
	// TokenEnv names the environment variable that holds the token.
	TokenEnv string
	// TokenFile is the path of a file that holds the token (read at every use, trailing
	// white space removed).
	TokenFile string
	// Username is sent with the token (HTTP Basic); default "git".
	Username string
	// AllowInsecureHTTP must be set for an http:// URL: the token then travels in clear
	// text. Without it an http:// entry is refused.
	AllowInsecureHTTP bool
}

// source names where the entry's secret comes from, for logs and messages.
func (e Entry) source() string {
	if e.TokenEnv != "" {
		return "env " + e.TokenEnv
	}
	return "file " + e.TokenFile
}

// Config is what a Store is built from.
type Config struct {
	// Entries are the configured credentials (the config file's credentials list).
	Entries []Entry
	// Trusted are the repository URLs named on the command line (the control plane, the
	// GitOps repository, the forge API): their hosts receive FLEETFORM_GIT_TOKEN when
	// FLEETFORM_GIT_TOKEN_HOSTS is not set, and the legacy forge token (see ForgeToken).
	// Local paths are ignored.
	Trusted []string
	// Logger receives a debug line for every credential used (never the secret).
	Logger *slog.Logger
}

// scoped is an entry with its normalised scope.
type scoped struct {
	Entry
	prefix prefix
	legacy bool // from FLEETFORM_GIT_TOKEN
}

// Store chooses the credential for a URL. It is safe for concurrent use.
type Store struct {
	cfg     Config   // what it was built from
	entries []scoped // longest path first, configured before legacy on a tie
	trusted []origin // https origins of the hosts named on the command line
	logger  *slog.Logger
}

// New validates the entries and builds a Store. When FLEETFORM_GIT_TOKEN is set, it adds
// an entry for it: one per prefix in FLEETFORM_GIT_TOKEN_HOSTS when that is set, otherwise
// one per host of cfg.Trusted (https://host, whatever the URL's scheme; an http:// URL's
// host gets none). The token is never sent over plain HTTP.
func New(cfg Config) (*Store, error) {
	s := &Store{cfg: cfg, logger: cfg.Logger}
	if s.logger == nil {
		s.logger = slog.New(slog.DiscardHandler)
	}
	var errs []error
	seen := map[prefix]bool{}
	for i, e := range cfg.Entries {
		p, err := checkEntry(e)
		if err == nil && seen[p] {
			err = errors.New("another entry has the same URL")
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("credentials[%d] (%s): %w", i, repourl.Redact(e.URL), err))
			continue
		}
		seen[p] = true
		s.entries = append(s.entries, scoped{Entry: e, prefix: p})
	}
	s.trusted = trustedOrigins(cfg.Trusted)
	legacy, err := s.legacyEntries()
	if err != nil {
		errs = append(errs, err)
	}
	s.entries = append(s.entries, legacy...)
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	slices.SortStableFunc(s.entries, func(a, b scoped) int {
		return cmp.Compare(len(b.prefix.path), len(a.prefix.path))
	})
	return s, nil
}

// checkEntry validates a configured entry and returns its scope.
func checkEntry(e Entry) (prefix, error) {
	p, err := parsePrefix(e.URL)
	switch {
	case err != nil:
		return p, err
	case (e.TokenEnv == "") == (e.TokenFile == ""):
		return p, errors.New("want exactly one of tokenEnv and tokenFile")
	case p.scheme == "http" && !e.AllowInsecureHTTP:
		return p, errors.New("a credential is never sent over plain http unless the entry sets allowInsecureHTTP: true (use https)")
	case p.scheme == "https" && e.AllowInsecureHTTP:
		return p, errors.New("allowInsecureHTTP is for http:// URLs only (a https:// entry never matches http)")
	}
	return p, nil
}

// legacyEntries returns the entries FLEETFORM_GIT_TOKEN makes (see New).
func (s *Store) legacyEntries() ([]scoped, error) {
	if os.Getenv(TokenEnv) == "" {
		return nil, nil
	}
	e := Entry{TokenEnv: TokenEnv, Username: os.Getenv(UsernameEnv)}
	var prefixes []prefix
	if hosts := strings.TrimSpace(os.Getenv(TokenHostsEnv)); hosts != "" {
		for h := range strings.FieldsFuncSeq(hosts, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' || r == '\n' }) {
			raw := h
			if !strings.Contains(h, "://") {
				raw = "https://" + h
			}
			p, err := parsePrefix(raw)
			if err == nil && p.scheme != "https" {
				err = errors.New("the token is never sent over plain http (use a credentials entry with allowInsecureHTTP)")
			}
			if err != nil {
				return nil, fmt.Errorf("%s: %q: %w", TokenHostsEnv, repourl.Redact(h), err)
			}
			prefixes = append(prefixes, p)
		}
	} else {
		for _, o := range s.trusted {
			prefixes = append(prefixes, prefix{origin: o, path: "/"})
		}
	}
	out := make([]scoped, 0, len(prefixes))
	for _, p := range prefixes {
		e.URL = p.String()
		out = append(out, scoped{Entry: e, prefix: p, legacy: true})
	}
	return out, nil
}

// trustedOrigins returns the https origins of the hosts of urls: https://host[:port] for an
// https URL, https://host for ssh and scp-like ones; nothing for http URLs or local paths.
func trustedOrigins(urls []string) []origin {
	var out []origin
	for _, raw := range urls {
		o, ok := hostOrigin(raw)
		if ok && !slices.Contains(out, o) {
			out = append(out, o)
		}
	}
	return out
}

// hostOrigin returns the https origin of a repository URL's host (see trustedOrigins).
func hostOrigin(raw string) (origin, bool) {
	if !strings.Contains(raw, "://") {
		host, ok := scpHost(raw)
		if !ok {
			return origin{}, false
		}
		raw = "ssh://" + host + "/"
	}
	u, err := url.Parse(raw)
	if err != nil {
		return origin{}, false
	}
	switch asciiLower(u.Scheme) {
	case "https":
	case "ssh", "git+ssh", "ssh+git":
		u = &url.URL{Scheme: "https", Host: u.Hostname()}
		if strings.Contains(u.Host, ":") {
			u.Host = "[" + u.Host + "]"
		}
	default:
		return origin{}, false
	}
	o, err := parseOrigin(u)
	return o, err == nil
}

// scpHost returns the host of an scp-like address "[user@]host:path" (repourl.Split).
func scpHost(raw string) (string, bool) {
	host, _, err := repourl.Split(raw)
	return host, err == nil
}

// Credential is the secret chosen for one URL. Its String, GoString and LogValue never
// show the secret, so neither does printing or logging it.
type Credential struct {
	// Username and Password are sent as HTTP Basic credentials (Password is the token).
	Username, Password string
	// Entry is the URL of the entry that matched; Source where the secret came from
	// ("env NAME" or "file PATH").
	Entry, Source string
	// origin is where the credential may go: the origin of the URL it was chosen for.
	origin origin
}

// String names the entry and the source, without the secret.
func (c Credential) String() string { return "credential " + c.Entry + " (" + c.Source + ")" }

// GoString is String, for %#v.
func (c Credential) GoString() string { return c.String() }

// LogValue logs the entry and the source, without the secret.
func (c Credential) LogValue() slog.Value {
	return slog.GroupValue(slog.String("url", c.Entry), slog.String("source", c.Source))
}

// Covers reports whether the credential may go with a request to u: the same scheme, host
// and port as the URL it was chosen for. A redirect to another host, port or scheme is not
// covered.
func (c *Credential) Covers(u *url.URL) bool {
	if c == nil || u == nil || u.User != nil {
		return false
	}
	t, ok := targetOf(u)
	return ok && t.origin == c.origin
}

// For returns the credential for a repository URL, or nil when none applies: no entry
// matches (the longest matching prefix wins), the URL is not http(s) or carries its own
// user information. An error means an entry matched but its secret could not be read.
// Every credential returned is logged at debug level ("credential used"), without the
// secret.
func (s *Store) For(ctx context.Context, rawURL string) (*Credential, error) {
	if s == nil {
		return nil, nil
	}
	t, ok := parseTarget(rawURL)
	if !ok {
		return nil, nil
	}
	for _, e := range s.entries {
		if e.prefix.matches(t) {
			return s.use(ctx, e, t, rawURL)
		}
	}
	if os.Getenv(TokenEnv) != "" {
		s.logger.InfoContext(ctx, "FLEETFORM_GIT_TOKEN not sent: it is for the hosts in FLEETFORM_GIT_TOKEN_HOSTS, "+
			"or else for the hosts of the repositories named on the command line, over https; "+
			"configure a credential for this URL if it needs one", "url", repourl.Redact(rawURL))
	} else {
		s.logger.DebugContext(ctx, "no credential", "url", repourl.Redact(rawURL))
	}
	return nil, nil
}

// use reads the entry's secret and logs its use.
func (s *Store) use(ctx context.Context, e scoped, t target, rawURL string) (*Credential, error) {
	secret, err := s.secret(e.Entry)
	if err != nil {
		return nil, fmt.Errorf("credential %s for %s: %w", e.URL, repourl.Redact(rawURL), err)
	}
	c := &Credential{Username: cmp.Or(e.Username, defaultUsername), Password: secret,
		Entry: e.prefix.String(), Source: e.source(), origin: t.origin}
	s.logger.DebugContext(ctx, "credential used", "host", t.String(), "url", repourl.Redact(rawURL),
		"credential", c.Entry, "source", c.Source)
	return c, nil
}

// secret reads an entry's token.
func (s *Store) secret(e Entry) (string, error) {
	if e.TokenEnv != "" {
		v := strings.TrimSpace(os.Getenv(e.TokenEnv))
		if v == "" {
			return "", fmt.Errorf("environment variable %s is empty", e.TokenEnv)
		}
		return v, nil
	}
	f, err := os.Open(e.TokenFile)
	if err != nil {
		return "", fmt.Errorf("read token file: %w", err)
	}
	data, err := io.ReadAll(io.LimitReader(f, maxTokenFile))
	if closeErr := f.Close(); err == nil {
		err = closeErr
	}
	if err != nil {
		return "", fmt.Errorf("read token file %s: %w", e.TokenFile, err)
	}
	v := string(bytes.TrimSpace(data))
	if v == "" {
		return "", fmt.Errorf("token file %s is empty", e.TokenFile)
	}
	return v, nil
}
