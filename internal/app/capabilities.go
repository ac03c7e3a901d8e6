package app

import (
	"cmp"
	"fmt"
	"maps"
	"runtime/debug"
	"slices"
	"sync"

	"helm.sh/helm/v3/pkg/chartutil"
)

// DefaultKubeVersion is the Kubernetes version charts are rendered for when the settings
// name none: the one helm v3.22's release build renders for (its client-go, 0.37).
const DefaultKubeVersion = "v1.37.0"

// Capabilities are what a chart learns of the cluster it is rendered for (Helm's
// .Capabilities): the Kubernetes version and the API versions it serves beyond Kubernetes'
// own.
type Capabilities struct {
	// KubeVersion is the Kubernetes version (default DefaultKubeVersion).
	KubeVersion string `json:"kubeVersion,omitempty"`
	// APIVersions are extra API versions the clusters serve, as group/version
	// (monitoring.coreos.com/v1) or group/version/Kind.
	APIVersions []string `json:"apiVersions,omitempty"`
}

// kubeVersion parses KubeVersion, DefaultKubeVersion when it is empty.
func (c Capabilities) kubeVersion() (*chartutil.KubeVersion, error) {
	v := c.KubeVersion
	if v == "" {
		v = DefaultKubeVersion
	}
	kv, err := chartutil.ParseKubeVersion(v)
	if err != nil {
		return nil, fmt.Errorf("%s: kubeVersion %q: %w (write it as v1.33.0)", SettingsFile, v, err)
	}
	return kv, nil
}

// helm returns Helm's capabilities for c: Helm's defaults with the Kubernetes version and
// the extra API versions.
func (c Capabilities) helm() (*chartutil.Capabilities, error) {
	kv, err := c.kubeVersion()
	if err != nil {
		return nil, err
	}
	caps := chartutil.DefaultCapabilities.Copy()
	caps.KubeVersion = *kv
	caps.HelmVersion.Version = helmVersion()
	caps.APIVersions = slices.Concat(caps.APIVersions, c.APIVersions) // Copy shares Helm's slice
	return caps, nil
}

// helmModule is the Go module of the Helm SDK fleetform renders charts with.
const helmModule = "helm.sh/helm/v3"

// helmVersion is .Capabilities.HelmVersion.Version as the helm binary of the SDK's release
// reports it (v3.22.0): the SDK alone knows only its minor version (v3.22) unless it is
// linked with helm's own flags.
var helmVersion = sync.OnceValue(func() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, m := range bi.Deps {
			if m.Path == helmModule {
				return cmp.Or(m.Replace, m).Version
			}
		}
	}
	return chartutil.DefaultCapabilities.HelmVersion.Version
})

// For returns the capabilities of a deployment target: the settings' own, then its
// environment's, then its own (a kubeVersion set nearer the target wins; apiVersions add
// up).
func (s Settings) For(t Target) Capabilities {
	c := s.Capabilities
	c.APIVersions = slices.Clone(c.APIVersions)
	for _, o := range []Capabilities{s.Environments[t.Environment], s.Targets[t.Name]} {
		if o.KubeVersion != "" {
			c.KubeVersion = o.KubeVersion
		}
		c.APIVersions = append(c.APIVersions, o.APIVersions...)
	}
	slices.Sort(c.APIVersions)
	c.APIVersions = slices.Compact(c.APIVersions)
	return c
}

// rendering is the settings what is rendered depends on (the promotion gates do not).
func (s Settings) rendering() Settings {
	s.Promotion = nil
	return s
}

// check validates the settings Helm reads: the release name and every kubeVersion.
func (s Settings) check() error {
	if s.ReleaseName != "" {
		if err := chartutil.ValidateReleaseName(s.ReleaseName); err != nil {
			return fmt.Errorf("%s: releaseName %q: %w (lowercase letters, digits, '-' and '.', at most 53 characters)", SettingsFile, s.ReleaseName, err)
		}
	}
	all := []Capabilities{s.Capabilities}
	for _, m := range []map[string]Capabilities{s.Environments, s.Targets} {
		for _, k := range slices.Sorted(maps.Keys(m)) {
			all = append(all, m[k])
		}
	}
	for _, c := range all {
		if c.KubeVersion == "" {
			continue
		}
		if _, err := c.kubeVersion(); err != nil {
			return err
		}
	}
	return nil
}
