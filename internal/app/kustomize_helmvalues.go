package app

import (
	"fmt"
	"path"
	"slices"
	"strings"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"sigs.k8s.io/kustomize/api/types"
	kyaml "sigs.k8s.io/kustomize/kyaml/yaml"
	"sigs.k8s.io/kustomize/kyaml/yaml/merge2"
	"sigs.k8s.io/yaml"
)

// chartValues are the values kustomize gives helm for a chart entry: valuesFile (default
// the chart's values.yaml) with valuesInline merged in as valuesMerge says (override,
// the default: inline wins; merge: the file wins; replace: inline alone), then each
// additionalValuesFiles, merged as helm merges -f files.
func (w *kustomizeWalk) chartValues(dir, file string, c types.HelmChart, chartDir string) (map[string]any, error) {
	valuesFile := c.ValuesFile
	if valuesFile == "" {
		valuesFile = path.Join(chartDir, "values.yaml")
	}
	first, err := w.loadRestricted(dir, file, valuesFile)
	if err != nil {
		return nil, err
	}
	if len(c.ValuesInline) > 0 {
		if first, err = inlineValues(first, c.ValuesInline, c.ValuesMerge); err != nil {
			return nil, fmt.Errorf("%s: helmCharts: chart %s: %w", file, c.Name, err)
		}
	}
	vals := map[string]any{}
	for i, f := range slices.Concat([]string{valuesFile}, c.AdditionalValuesFiles) {
		data := first
		if i > 0 {
			if data, err = w.loadRestricted(dir, file, f); err != nil {
				return nil, err
			}
		}
		m := map[string]any{}
		if err := yaml.Unmarshal(data, &m); err != nil {
			return nil, fmt.Errorf("%s: helmCharts: chart %s: values %s: %w", file, c.Name, strings.TrimPrefix(f, "/"), err)
		}
		vals = mergeHelmValues(vals, m)
	}
	return vals, nil
}

// loadRestricted reads a file a kustomization in dir names, under kustomize's load
// restrictor.
func (w *kustomizeWalk) loadRestricted(dir, file, p string) ([]byte, error) {
	full := path.Clean(p)
	if !path.IsAbs(p) {
		full = path.Join(dir, p)
	}
	lr, err := loadRestrictions(w.req.LoadRestrictor)
	if err != nil {
		return nil, err
	}
	if lr == types.LoadRestrictionsRootOnly && full != dir && !strings.HasPrefix(full, strings.TrimSuffix(dir, "/")+"/") {
		return nil, fmt.Errorf("%s: helmCharts: %s is not in or below %s/ (kustomize's default load restrictor; set loadRestrictor: %s in %s to allow it)",
			file, strings.TrimPrefix(full, "/"), strings.TrimPrefix(dir, "/"), LoadNone, SettingsFile)
	}
	data, err := w.fs.ReadFile(full)
	if err != nil {
		return nil, fmt.Errorf("%s: helmCharts: %s: %w", file, strings.TrimPrefix(full, "/"), err)
	}
	return data, nil
}

// inlineValues merges valuesInline with the values file as kustomize does (kyaml's
// merge2), and returns the values file helm is given.
func inlineValues(file []byte, inline map[string]any, mode string) ([]byte, error) {
	switch mode {
	case "", "override", "merge":
	case "replace":
		return yaml.Marshal(inline)
	default:
		return nil, fmt.Errorf("valuesMerge %q: want merge, override or replace", mode)
	}
	values, err := kyaml.Parse(string(file))
	if err != nil {
		return nil, fmt.Errorf("values file: %w", err)
	}
	in, err := kyaml.FromMap(inline)
	if err != nil {
		return nil, fmt.Errorf("valuesInline: %w", err)
	}
	var out *kyaml.RNode
	if mode == "merge" {
		out, err = merge2.Merge(values, in.Copy(), kyaml.MergeOptions{})
	} else {
		out, err = merge2.Merge(in, values.Copy(), kyaml.MergeOptions{})
	}
	if err != nil {
		return nil, fmt.Errorf("merging valuesInline: %w", err)
	}
	m, err := out.Map()
	if err != nil {
		return nil, err
	}
	return yaml.Marshal(m)
}

// loadChartFiles loads the chart in dir (a path in the repository) from files as helm
// loads a chart's folder: its .helmignore and helm's default rule applied, byte order
// marks removed.
func loadChartFiles(files map[string][]byte, dir string) (*chart.Chart, error) {
	in := map[string][]byte{}
	for name, data := range files {
		if rel, ok := strings.CutPrefix(name, dir+"/"); ok {
			in[rel] = data
		}
	}
	bf, err := chartFiles(in)
	if err != nil {
		return nil, err
	}
	return loader.LoadFiles(bf)
}
