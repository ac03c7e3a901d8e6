package app

import (
	"fmt"
	"maps"
	"path"
	"slices"
	"strings"

	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"
)

// kustomizationNames are the file names kustomize reads a kustomization from.
var kustomizationNames = []string{"kustomization.yaml", "kustomization.yml", "Kustomization"}

// renderKustomize builds the kustomize base with the kustomize API on an in-memory file
// system (no plugins, no exec, nothing outside the base, no remote bases). The variables
// are substituted in the base's kustomization files (images: newTag: $IMAGE_TAG), and the
// composed values are added as a ConfigMap <release>-values, one key per leaf path.
func (a *App) renderKustomize(values *Values, vars map[string]string, target string) ([]Object, error) {
	fs := filesys.MakeFsInMemory()
	for _, name := range slices.Sorted(maps.Keys(a.files)) {
		data := a.files[name]
		if slices.Contains(kustomizationNames, path.Base(name)) {
			var err error
			if data, err = Subst(a.KustomizeDir+"/"+name, data, vars); err != nil {
				return nil, err
			}
			if err := refuseRemote(a.KustomizeDir+"/"+name, data); err != nil {
				return nil, err
			}
		}
		if err := fs.MkdirAll(path.Dir("/base/" + name)); err != nil {
			return nil, err
		}
		if err := fs.WriteFile("/base/"+name, data); err != nil {
			return nil, err
		}
	}
	k := krusty.MakeKustomizer(krusty.MakeDefaultOptions())
	m, err := k.Run(fs, "/base")
	if err != nil {
		return nil, fmt.Errorf("target %s: kustomize %s: %w", target, a.KustomizeDir, err)
	}
	var docs []doc
	for _, r := range m.Resources() {
		y, err := r.AsYAML()
		if err != nil {
			return nil, err
		}
		docs = append(docs, doc{template: a.KustomizeDir, text: string(y)})
	}
	cm, err := a.valuesConfigMap(values)
	if err != nil {
		return nil, err
	}
	return nameObjects(append(docs, cm), "")
}

// valuesConfigMap is the composed values as a ConfigMap: key = leaf path, value = the value
// (JSON for lists and mappings).
func (a *App) valuesConfigMap(values *Values) (doc, error) {
	data := map[string]string{}
	for p := range values.Prov {
		v, _ := values.Get(p)
		switch x := v.(type) {
		case string:
			data[p] = x
		default:
			b, err := yaml.Marshal(x)
			if err != nil {
				return doc{}, err
			}
			data[p] = strings.TrimSpace(string(b))
		}
	}
	name := a.Settings.ReleaseName
	if name == "" {
		name = a.Workload.Metadata.Name
	}
	b, err := yaml.Marshal(map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": name + "-values"}, "data": data})
	return doc{template: "fleetform: the composed values", text: string(b)}, err
}

// refuseRemote refuses a kustomization that names a remote base (kustomize would run git).
func refuseRemote(file string, data []byte) error {
	var k struct {
		Resources  []string `json:"resources"`
		Components []string `json:"components"`
		Bases      []string `json:"bases"`
	}
	if err := yaml.Unmarshal(data, &k); err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	for _, r := range slices.Concat(k.Resources, k.Components, k.Bases) {
		if strings.Contains(r, "://") || strings.HasPrefix(r, "git@") || strings.HasPrefix(r, "github.com/") {
			return fmt.Errorf("%s: remote base %s: fleetform renders without network; vendor it into the source repository", file, r)
		}
	}
	return nil
}
