package app

import (
	"bytes"
	"fmt"
	"slices"
	"strings"

	yaml "go.yaml.in/yaml/v3"
	"sigs.k8s.io/kustomize/api/types"
)

// refuseRemote refuses a kustomization that names anything remote where kustomize reads a
// path: a remote base or component (kustomize would run git clone) or a remote file
// (kustomize would fetch the URL). fleetform renders without network.
func refuseRemote(file string, data []byte) error {
	k, _, err := parseKustomization(file, data)
	if err != nil {
		return err
	}
	return refuseRemoteIn(file, k)
}

// parseKustomization decodes a kustomization as kustomize does (unknown fields are errors;
// deprecated fields moved to their successors: bases to resources…), with the deprecated
// fields it uses, each a warning naming the file.
func parseKustomization(file string, data []byte) (*types.Kustomization, []string, error) {
	var k types.Kustomization
	if err := k.Unmarshal(data); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", file, err)
	}
	var deprecated []string
	for _, msg := range *k.CheckDeprecatedFields() {
		deprecated = append(deprecated, file+": "+strings.TrimPrefix(msg, "# Warning: "))
	}
	k.FixKustomization()
	return &k, deprecated, nil
}

// refuseRemoteIn refuses a parsed kustomization that names anything remote.
func refuseRemoteIn(file string, k *types.Kustomization) error {
	for _, p := range kustomizationPaths(k) {
		if !isRemote(p) {
			continue
		}
		what := "file"
		if slices.Contains(k.Resources, p) || slices.Contains(k.Components, p) {
			what = "base"
		}
		return fmt.Errorf("%s: remote %s %s: fleetform renders without network; vendor it into the source repository", file, what, p)
	}
	return nil
}

// kustomizationPaths are the paths (or URLs) a kustomization names: every field kustomize
// loads a file or a folder from. Inline YAML (patches, plugin configurations) is left
// out.
func kustomizationPaths(k *types.Kustomization) []string {
	out := slices.Concat(k.Resources, k.Components, k.Crds, k.Configurations,
		k.Generators, k.Transformers, k.Validators)
	for _, p := range k.PatchesStrategicMerge { //nolint:staticcheck // deprecated, still read by kustomize
		out = append(out, string(p))
	}
	for _, p := range slices.Concat(k.Patches, k.PatchesJson6902) { //nolint:staticcheck // deprecated, still read by kustomize
		out = append(out, p.Path)
	}
	for _, r := range k.Replacements {
		out = append(out, r.Path)
	}
	for _, g := range k.ConfigMapGenerator {
		out = append(out, generatorPaths(g.GeneratorArgs)...)
	}
	for _, g := range k.SecretGenerator {
		out = append(out, generatorPaths(g.GeneratorArgs)...)
	}
	for _, c := range k.HelmCharts {
		out = append(out, c.ValuesFile)
		out = append(out, c.AdditionalValuesFiles...)
	}
	if k.HelmGlobals != nil {
		out = append(out, k.HelmGlobals.ChartHome)
	}
	out = append(out, k.OpenAPI["path"])
	return slices.DeleteFunc(out, func(p string) bool { return strings.Contains(p, "\n") })
}

// generatorPaths are the files of a configMapGenerator or secretGenerator (files: entries
// may be key=path).
func generatorPaths(g types.GeneratorArgs) []string {
	out := slices.Concat(g.EnvSources, []string{g.EnvSource})
	for _, f := range g.FileSources {
		_, p, ok := strings.Cut(f, "=")
		if !ok {
			p = f
		}
		out = append(out, p)
	}
	return out
}

// isRemote reports whether kustomize reads p from the network: a URL (http, https, ssh,
// file, git::…), an SCP-like git address (git@host:org/repo) or a github.com/ path.
func isRemote(p string) bool {
	l := strings.ToLower(strings.TrimSpace(p))
	l = strings.TrimPrefix(l, "git::")
	if strings.Contains(l, "://") || strings.HasPrefix(l, "github.com/") || strings.HasPrefix(l, "github.com:") {
		return true
	}
	user, _, ok := strings.Cut(l, "@")
	return ok && user != "" && user[0] >= 'a' && user[0] <= 'z' &&
		strings.Trim(user, "abcdefghijklmnopqrstuvwxyz0123456789-") == ""
}

// isConfigPathKey reports whether a field of kustomize's builtin plugin configurations
// names a file.
func isConfigPathKey(k string) bool {
	switch k {
	case "path", "files", "envs", "env", "targetFilePath", "argsFromFile",
		"valuesFile", "additionalValuesFiles", "chartHome", "resources", "components":
		return true
	}
	return false
}

// refuseRemoteConfig refuses a plugin configuration (an entry of generators, transformers
// or validators) that names a remote file in a field kustomize loads.
func refuseRemoteConfig(file string, data []byte) error {
	for _, n := range yamlDocs(data) {
		if p := remoteIn(n); p != "" {
			return fmt.Errorf("%s: remote file %s in a plugin configuration: fleetform renders without network; vendor it into the source repository", file, p)
		}
	}
	return nil
}

// yamlDocs are the documents of a YAML stream, up to the first that does not parse
// (kustomize reports it).
func yamlDocs(data []byte) []*yaml.Node {
	var out []*yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	for {
		var n yaml.Node
		if dec.Decode(&n) != nil {
			return out
		}
		out = append(out, &n)
	}
}

// remoteIn returns the first remote path in a field that names a file, under n.
func remoteIn(n *yaml.Node) string {
	if n.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(n.Content); i += 2 {
			if isConfigPathKey(n.Content[i].Value) {
				if p := remoteScalar(n.Content[i+1]); p != "" {
					return p
				}
			}
		}
	}
	for _, c := range n.Content {
		if p := remoteIn(c); p != "" {
			return p
		}
	}
	return ""
}

// remoteScalar returns n, or the first item of n, when it is remote.
func remoteScalar(n *yaml.Node) string {
	if n.Kind == yaml.ScalarNode && isRemote(n.Value) {
		return n.Value
	}
	for _, c := range n.Content {
		if c.Kind == yaml.ScalarNode && isRemote(c.Value) {
			return c.Value
		}
	}
	return ""
}
