package repourl

import (
	"net/url"
	"strings"
)

// Redact removes the credentials (user and password) from a URL: https://user:token@host/x
// becomes https://***@host/x. Anything that is not a URL with credentials is returned as is.
func Redact(raw string) string {
	if u, err := url.Parse(raw); err == nil && u.Scheme != "" {
		if u.User == nil {
			return raw
		}
		u.User = nil
		return u.Scheme + "://***@" + strings.TrimPrefix(u.String(), u.Scheme+"://")
	}
	scheme, rest, ok := strings.Cut(raw, "://")
	if !ok {
		return raw
	}
	if at := strings.LastIndex(rest, "@"); at >= 0 && at < strings.IndexAny(rest+"/", "/") {
		rest = "***@" + rest[at+1:]
	}
	return scheme + "://" + rest
}
