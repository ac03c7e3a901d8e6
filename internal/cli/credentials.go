package cli

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	git "github.com/go-git/go-git/v5"
	"sigs.k8s.io/yaml"

	"github.com/fleetform/fleetform/internal/controlplane"
	"github.com/fleetform/fleetform/internal/gitauth"
	"github.com/fleetform/fleetform/internal/redact"
)

// credentialsConfig is the credentials section of the config file.
type credentialsConfig struct {
	// Credentials scope the tokens sent to git repositories and forge APIs: each goes only
	// to the URLs under its url (see docs/security.md).
	Credentials []credentialConfig `json:"credentials,omitempty"`
}

// credentialConfig is one credentials entry of the config file.
type credentialConfig struct {
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

// credentials builds the credential store of a command from the config file's
// credentials and, for FLEETFORM_GIT_TOKEN and the legacy forge token, the hosts named on
// the command line: the control plane's (for a local clone, its origin remote's) and those
// of o.trusted (--gitops, --forge-url).
func (o *controlPlaneOptions) credentials(e *env) (*gitauth.Store, error) {
	cfg := gitauth.Config{Logger: e.Logger, Trusted: append(controlPlaneHosts(o.controlPlane), o.trusted...)}
	if o.configFile != "" {
		entries, err := readCredentials(o.configFile)
		if err != nil {
			return nil, failed(ExitUsage, err)
		}
		cfg.Entries = entries
	}
	s, err := gitauth.New(cfg)
	if err != nil {
		return nil, failed(ExitUsage, fmt.Errorf("credentials: %w", err))
	}
	return s, nil
}

// readCredentials reads the credentials section of a config file.
func readCredentials(path string) ([]gitauth.Entry, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read config: %w", err)
	}
	var cc credentialsConfig
	if err := yaml.Unmarshal(data, &cc); err != nil {
		return nil, fmt.Errorf("config %s: %w", path, err)
	}
	var errs []error
	entries := make([]gitauth.Entry, 0, len(cc.Credentials))
	for i, c := range cc.Credentials {
		if c.Token != "" || c.Password != "" {
			errs = append(errs, fmt.Errorf("config %s: credentials[%d] (%s): a secret written in the config file is refused: "+
				"name an environment variable (tokenEnv) or a file (tokenFile) that holds it", path, i, redact.URL(c.URL)))
			continue
		}
		file := c.TokenFile
		if file != "" && !filepath.IsAbs(file) {
			file = filepath.Join(filepath.Dir(path), file)
		}
		entries = append(entries, gitauth.Entry{URL: c.URL, TokenEnv: c.TokenEnv, TokenFile: file,
			Username: c.Username, AllowInsecureHTTP: c.AllowInsecureHTTP})
	}
	return entries, errors.Join(errs...)
}

// controlPlaneHosts returns the control plane's URL, or for a local git clone the URL of
// its origin remote (what it was cloned from: not something a change to its content can
// set); nothing for a directory that is not a clone.
func controlPlaneHosts(location string) []string {
	p, local := controlplane.LocalPath(location)
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

// commandLineCredentials builds the credential store of a command without a config file:
// FLEETFORM_GIT_TOKEN for the hosts of urls (see gitauth.New).
func commandLineCredentials(e *env, urls ...string) (*gitauth.Store, error) {
	s, err := gitauth.New(gitauth.Config{Logger: e.Logger, Trusted: urls})
	if err != nil {
		return nil, failed(ExitUsage, fmt.Errorf("credentials: %w", err))
	}
	return s, nil
}
