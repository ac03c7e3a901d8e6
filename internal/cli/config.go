package cli

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/fleetform/fleetform/internal/cli/command"
	"github.com/fleetform/fleetform/internal/fleet"
)

// configNames are the config files looked for, in the working directory and its parents,
// when neither --config nor FLEETFORM_CONFIG names one.
var configNames = []string{"fleetform.yaml", ".fleetform.yaml"}

// fileConfig is the optional config file. Paths in it are relative to the file.
type fileConfig struct {
	// ControlPlane is the control plane (a directory, a git repository or a URL), used when
	// --control-plane is not given.
	ControlPlane string `json:"controlPlane,omitempty"`
	// GitOps is the GitOps repository of each environment (a path or a URL), used by plan and
	// apply when --gitops is not given, instead of the environment's GitOpsRepo.
	GitOps map[string]string `json:"gitops,omitempty"`
	// RepoMap maps repository URLs to local paths.
	RepoMap map[string]string `json:"repoMap,omitempty"`
	// Layout forces the repository layout.
	Layout string `json:"layout,omitempty"`
	// Credentials scope the tokens sent to git repositories and forge APIs: each goes only
	// to the URLs under its url (see docs/security.md).
	Credentials []fleet.CredentialEntry `json:"credentials,omitempty"`
	// Serve sets what `fleetform serve`'s flags set.
	Serve serveConfig `json:"serve,omitzero"`
	// Hub sets what `fleetform hub serve`'s flags set.
	Hub hubConfig `json:"hub,omitzero"`
}

// hubConfig is the config file's hub section.
type hubConfig struct {
	OIDC ssoConfig `json:"oidc,omitzero"`
}

// serveConfig is the config file's serve section: the flags of `fleetform serve`.
type serveConfig struct {
	Addr         string   `json:"addr,omitempty"`
	DB           string   `json:"db,omitempty"`
	DataDir      string   `json:"dataDir,omitempty"`
	Interval     duration `json:"interval,omitzero"`
	Environments []string `json:"environments,omitempty"`
	PR           bool     `json:"pr,omitempty"`
	ForgeURL     string   `json:"forgeURL,omitempty"`
	Authoring    string   `json:"authoring,omitempty"`
	// OIDC sets what the --oidc-* flags set.
	OIDC ssoConfig `json:"oidc,omitzero"`
}

// duration is a Go duration written as text in the config file ("1m", "30s").
type duration struct{ time.Duration }

// UnmarshalJSON reads "1m"-style text.
func (d *duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("a duration is text such as \"1m\": %w", err)
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return err
	}
	d.Duration = v
	return nil
}

// findConfig returns the first config file found in dir or one of its parents, or "".
func findConfig(dir string) string {
	for {
		for _, name := range configNames {
			p := filepath.Join(dir, name)
			if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() {
				return p
			}
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
}

// readConfig reads and strictly decodes a config file, with its paths made relative to the
// working directory.
func readConfig(path string) (fileConfig, error) {
	var fc fileConfig
	data, err := os.ReadFile(path)
	if err != nil {
		return fc, fmt.Errorf("read config: %w", err)
	}
	if err := yaml.UnmarshalStrict(data, &fc); err != nil {
		return fc, fmt.Errorf("config %s: %w", path, err)
	}
	base := filepath.Dir(path)
	fc.ControlPlane = relativeTo(base, fc.ControlPlane)
	for env, loc := range fc.GitOps {
		fc.GitOps[env] = relativeTo(base, loc)
	}
	for url, p := range fc.RepoMap {
		fc.RepoMap[url] = relativeTo(base, p)
	}
	fc.Serve.DataDir = relativeTo(base, fc.Serve.DataDir)
	return fc, nil
}

// relativeTo resolves a local path of the config file against its folder; URLs, absolute
// paths and "" are kept.
func relativeTo(base, p string) string {
	if p == "" || filepath.IsAbs(p) || strings.Contains(p, "://") || (strings.Contains(p, "@") && strings.Contains(p, ":")) {
		return p
	}
	return filepath.Join(base, p)
}

// resolve settles, once, the config file (--config, FLEETFORM_CONFIG, or the first
// fleetform.yaml or .fleetform.yaml found from the working directory up) and the control
// plane (--control-plane, else the config file's controlPlane, else "." when it is a control plane).
func (o *controlPlaneOptions) resolve(e *env) error {
	if o.resolved {
		return nil
	}
	o.resolved = true
	how := "given"
	if o.configFile == "" {
		if wd, err := os.Getwd(); err == nil {
			o.configFile, how = findConfig(wd), "found"
		}
	}
	if o.configFile != "" {
		fc, err := readConfig(o.configFile)
		if err != nil {
			return command.Usage(err)
		}
		o.file = fc
		e.Logger.Debug("config file", "path", o.configFile, "how", how)
	} else {
		e.Logger.Debug("no config file", "looked_for", strings.Join(configNames, ", "))
	}
	if o.controlPlane == "" {
		o.controlPlane = o.file.ControlPlane
	}
	if o.controlPlane == "" {
		o.controlPlane, o.implicit = ".", true
	}
	for _, env := range slices.Sorted(maps.Keys(o.file.GitOps)) {
		o.trusted = append(o.trusted, o.file.GitOps[env]) // the operator's own, like --gitops
	}
	return nil
}
