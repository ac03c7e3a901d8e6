package gitauth

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"

	"github.com/fleetform/fleetform/internal/repourl"
)

// forgeTokenEnvs are the environment variables the legacy forge token is read from, the
// first set one winning.
var forgeTokenEnvs = [...]string{"FLEETFORM_GITHUB_TOKEN", "GITHUB_TOKEN"}

// ErrNoForgeToken is returned (wrapped) by ForgeToken when no token may go to the API.
var ErrNoForgeToken = errors.New("no forge token for this API")

// ForgeToken returns the token for the forge API at apiBase, used for the repository at
// repoURL. The API must be the repository host's own: on the same host
// (https://HOST/api/v3/, GitHub Enterprise Server) or on api.HOST (api.github.com for
// github.com). The token is, in order:
//
//   - the configured entry that matches apiBase (an http:// API needs an entry with
//     allowInsecureHTTP);
//   - FLEETFORM_GITHUB_TOKEN or GITHUB_TOKEN, over https only, when the API's host is named
//     on the command line (Config.Trusted: --forge-url) or is the API of such a host.
//
// Otherwise the error wraps ErrNoForgeToken. The token used is logged at debug level
// ("credential used"), without the secret.
func (s *Store) ForgeToken(ctx context.Context, apiBase, repoURL string) (*Credential, error) {
	api, ok := parseTarget(apiBase)
	if !ok {
		return nil, fmt.Errorf("forge API %q: want an https URL without user information", repourl.Redact(apiBase))
	}
	repoHost, ok := repositoryHost(repoURL)
	if !ok || (api.host != repoHost && api.host != "api."+repoHost) {
		return nil, fmt.Errorf("%w: the forge API %s is not the one of the repository's host %s (want https://%s/api/v3/ or https://api.%s/)",
			ErrNoForgeToken, api.origin, repoHost, repoHost, repoHost)
	}
	for _, e := range s.entries {
		if !e.legacy && e.prefix.matches(api) {
			return s.use(ctx, e, api, apiBase)
		}
	}
	if api.scheme != "https" {
		return nil, fmt.Errorf("%w: %s is plain http (a token goes over http only with a credentials entry for it with allowInsecureHTTP)",
			ErrNoForgeToken, api.origin)
	}
	if !s.trustedAPI(api.origin) {
		return nil, fmt.Errorf("%w: %s is not named on the command line (give --forge-url, or a credentials entry for it)",
			ErrNoForgeToken, api.origin)
	}
	for _, name := range forgeTokenEnvs {
		if os.Getenv(name) != "" {
			return s.use(ctx, scoped{Entry: Entry{TokenEnv: name}, prefix: prefix{origin: api.origin, path: "/"}}, api, apiBase)
		}
	}
	return nil, fmt.Errorf("%w: no token in %s or %s, and no credentials entry for %s",
		ErrNoForgeToken, forgeTokenEnvs[0], forgeTokenEnvs[1], api.origin)
}

// trustedAPI reports whether an https API origin is, or is the api. host of, a host named
// on the command line.
func (s *Store) trustedAPI(api origin) bool {
	for _, t := range s.trusted {
		if t == api {
			return true
		}
		if api.port == "443" && t.port == "443" && api.host == "api."+t.host {
			return true
		}
	}
	return false
}

// repositoryHost returns the host name of a repository URL (https, http, ssh or scp-like),
// in lower case.
func repositoryHost(raw string) (string, bool) {
	if !strings.Contains(raw, "://") {
		host, ok := scpHost(raw)
		return asciiLower(host), ok
	}
	u, err := url.Parse(raw)
	if err != nil || u.Hostname() == "" {
		return "", false
	}
	return asciiLower(u.Hostname()), true
}
