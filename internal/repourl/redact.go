package repourl

import (
	"net/url"
	"regexp"
	"strings"
)

// Redact removes the credentials from a URL: the user and password (https://user:token@host/x
// becomes https://***@host/x) and the values of its query string (?token=*** ). Anything
// that is not a URL with credentials is returned as is.
func Redact(raw string) string {
	if u, err := url.Parse(raw); err == nil && u.Scheme != "" {
		if u.User == nil && u.RawQuery == "" {
			return raw
		}
		redactQuery(u)
		if u.User == nil {
			return u.String()
		}
		u.User = nil
		return u.Scheme + "://***@" + strings.TrimPrefix(u.String(), u.Scheme+"://")
	}
	if scheme, rest, had := cutUserinfo(raw); had {
		return scheme + "://***@" + rest
	}
	return raw
}

// urlInText finds the URLs of a text: a scheme, "://", and what follows up to a space or a
// quote.
var urlInText = regexp.MustCompile(`[A-Za-z][A-Za-z0-9+.-]*://[^\s"'<>]+`)

// RedactText is text (an error message, say) with every URL in it redacted as Redact does:
// a library's message may print a URL with the credentials it was given.
func RedactText(text string) string {
	if !strings.Contains(text, "://") {
		return text
	}
	return urlInText.ReplaceAllStringFunc(text, Redact)
}

// WithoutCredentials returns the URL a cluster or a page may be given: without a password,
// without the user of an http(s) URL (a token is often written there) and without a query
// string; and whether anything was removed. An ssh user without a password (git@host) is
// kept: it is not a secret. Anything that is not a URL is returned as is.
func WithoutCredentials(raw string) (string, bool) {
	u, err := url.Parse(raw)
	if err != nil {
		if scheme, rest, had := cutUserinfo(raw); had { // a password with characters a URL may not hold is still one
			return scheme + "://" + rest, true
		}
		return raw, false
	}
	if u.Scheme == "" || u.Host == "" {
		return raw, false
	}
	removed := false
	if u.User != nil {
		if _, hasPassword := u.User.Password(); hasPassword || u.Scheme == "http" || u.Scheme == "https" {
			u.User, removed = nil, true
		}
	}
	if u.RawQuery != "" || u.ForceQuery {
		u.RawQuery, u.ForceQuery, removed = "", false, true
	}
	if !removed {
		return raw, false
	}
	return u.String(), true
}

// cutUserinfo splits scheme://[userinfo@]rest, for a URL that may not parse: its scheme, what
// follows the user information, and whether there was some.
func cutUserinfo(raw string) (scheme, rest string, had bool) {
	scheme, rest, ok := strings.Cut(raw, "://")
	if !ok {
		return "", raw, false
	}
	at := strings.LastIndex(rest, "@")
	if at < 0 || at > strings.IndexAny(rest+"/", "/") {
		return scheme, rest, false
	}
	return scheme, rest[at+1:], true
}

// redactQuery replaces the value of every parameter of u's query with ***.
func redactQuery(u *url.URL) {
	if u.RawQuery == "" {
		return
	}
	var parts []string
	for p := range strings.SplitSeq(u.RawQuery, "&") {
		key, _, _ := strings.Cut(p, "=")
		parts = append(parts, key+"=***")
	}
	u.RawQuery = strings.Join(parts, "&")
}
