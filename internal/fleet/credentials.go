package fleet

import (
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"

	git "github.com/go-git/go-git/v5"

	"github.com/fleetform/fleetform/internal/gitauth"
	"github.com/fleetform/fleetform/internal/repourl"
)

// CredentialEntry is one entry of the config file's credentials: a token scoped to the URLs
// under URL (see docs/security.md).
type CredentialEntry struct {
	// URL is a host (https://github.com) or a URL prefix (https://git.example.com/team/).
	URL string `json:"url"`
	// TokenEnv names the environment variable that holds the token.
	TokenEnv string `json:"tokenEnv,omitempty"`
	// TokenFile is a file that holds the token (relative to the config file).
	TokenFile string `json:"tokenFile,omitempty"`
	// Username goes with the token (default "git").
	Username string `json:"username,omitempty"`
	// AllowInsecureHTTP lets the token go over plain http to an http:// URL.
	AllowInsecureHTTP bool `json:"allowInsecureHTTP,omitempty"`
	// Token and Password are refused: a secret does not belong in a config file.
	Token    string `json:"token,omitempty"`
	Password string `json:"password,omitempty"`
}

// Credentials builds the credential store of a command or a service: the entries of the
// config file at configPath ("": none) and, for FLEETFORM_GIT_TOKEN and the legacy forge
// token, the hosts named on the command line: the control plane's (for a local clone, its
// origin remote's; none for "") and trusted's (--gitops, --forge-url). Its errors are
// UsageErrors.
func Credentials(configPath string, entries []CredentialEntry, controlPlane string, trusted []string, logger *slog.Logger) (*gitauth.Store, error) {
	cfg := gitauth.Config{Logger: logger, Trusted: trusted}
	if controlPlane != "" {
		cfg.Trusted = append(controlPlaneHosts(controlPlane), trusted...)
	}
	var errs []error
	for i, c := range entries {
		if c.Token != "" || c.Password != "" {
			errs = append(errs, fmt.Errorf("config %s: credentials[%d] (%s): a secret written in the config file is refused: "+
				"name an environment variable (tokenEnv) or a file (tokenFile) that holds it", configPath, i, repourl.Redact(c.URL)))
			continue
		}
		file := c.TokenFile
		if file != "" && !filepath.IsAbs(file) {
			file = filepath.Join(filepath.Dir(configPath), file)
		}
		cfg.Entries = append(cfg.Entries, gitauth.Entry{URL: c.URL, TokenEnv: c.TokenEnv, TokenFile: file,
			Username: c.Username, AllowInsecureHTTP: c.AllowInsecureHTTP})
	}
	if err := errors.Join(errs...); err != nil {
		return nil, Usage(err)
	}
	s, err := gitauth.New(cfg)
	if err != nil {
		return nil, Usagef("credentials: %w", err)
	}
	return s, nil
}

// controlPlaneHosts returns the control plane's URL, or for a local git clone the URL of
// its origin remote (what it was cloned from: not something a change to its content can
// set); nothing for a directory that is not a clone.
func controlPlaneHosts(location string) []string {
	p, local := repourl.LocalPath(location)
	if !local {
		return []string{location}
	}
	g, err := git.PlainOpenWithOptions(p, &git.PlainOpenOptions{DetectDotGit: true, EnableDotGitCommonDir: true})
	if err != nil {
		return nil
	}
	r, err := g.Remote("origin")
	if err != nil {
		return nil
	}
	return r.Config().URLs
}
