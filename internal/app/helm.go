package app

import (
	"bytes"
	"fmt"
	"maps"
	"path"
	"regexp"
	"slices"
	"strings"
	"sync"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
	"sigs.k8s.io/yaml"
)

// helmChart is a chart loaded once (without its values.yaml and schema, which fleetform
// handles itself) and shared by the targets it renders; loading it is safe for concurrent
// use, and Render does not change it.
type helmChart struct {
	once  sync.Once
	chart *chart.Chart
	err   error
}

func (a *App) loadChart() (*chart.Chart, error) {
	a.helmOnce().once.Do(func() {
		files := make([]*loader.BufferedFile, 0, len(a.files))
		for _, name := range slices.Sorted(maps.Keys(a.files)) {
			files = append(files, &loader.BufferedFile{Name: name, Data: a.files[name]})
		}
		c, err := loader.LoadFiles(files)
		if err != nil {
			a.helm.err = fmt.Errorf("chart %s: %w", a.ChartDir, err)
			return
		}
		c.Values, c.Schema = nil, nil
		a.helm.chart = c
	})
	return a.helm.chart, a.helm.err
}

func (a *App) helmOnce() *helmChart {
	if a.helm == nil {
		a.helm = &helmChart{}
	}
	return a.helm
}

// Object is one rendered Kubernetes object: its file name in the target's folder and its
// YAML.
type Object struct {
	File string
	Data []byte
}

// renderHelm renders the chart with values, client-only: no cluster, no network, default
// capabilities. Templates are rendered in name order and their objects returned in order.
func (a *App) renderHelm(values map[string]any, target string) ([]Object, error) {
	c, err := a.loadChart()
	if err != nil {
		return nil, err
	}
	release := a.Settings.ReleaseName
	if release == "" {
		release = a.Workload.Metadata.Name
	}
	opts := chartutil.ReleaseOptions{Name: release, Namespace: "", Revision: 1, IsInstall: true}
	vals, err := chartutil.ToRenderValuesWithSchemaValidation(c, values, opts, chartutil.DefaultCapabilities, true)
	if err != nil {
		return nil, fmt.Errorf("target %s: helm values: %w", target, err)
	}
	out, err := engine.Render(c, vals)
	if err != nil {
		return nil, fmt.Errorf("target %s: helm: %w", target, err)
	}
	var docs []doc
	for _, name := range slices.Sorted(maps.Keys(out)) {
		if strings.HasSuffix(name, "NOTES.txt") || strings.HasPrefix(path.Base(name), "_") {
			continue
		}
		docs = append(docs, splitDocs(name, out[name])...)
	}
	return nameObjects(docs)
}

// doc is one YAML document of a rendered template.
type doc struct {
	template string
	text     string
}

var docSep = regexp.MustCompile(`(?m)^---[ \t]*(#.*)?$`)

func splitDocs(template, text string) []doc {
	var out []doc
	for _, part := range docSep.Split(text, -1) {
		if isBlankYAML(part) {
			continue
		}
		out = append(out, doc{template: template, text: strings.TrimSpace(part) + "\n"})
	}
	return out
}

// isBlankYAML reports whether a document has nothing but blank lines and comments.
func isBlankYAML(s string) bool {
	for line := range strings.SplitSeq(s, "\n") {
		t := strings.TrimSpace(line)
		if t != "" && !strings.HasPrefix(t, "#") {
			return false
		}
	}
	return true
}

// nameObjects names each object's file <kind>-<name>.yaml (lowercase; objects in another
// namespace than the target's get <namespace>- in front; a second object of the same name
// gets -2, -3…). Documents that are not Kubernetes objects are an error naming the
// template.
func nameObjects(docs []doc) ([]Object, error) {
	seen := map[string]int{}
	out := make([]Object, 0, len(docs))
	for _, d := range docs {
		var meta struct {
			Kind     string `json:"kind"`
			Metadata struct {
				Name      string `json:"name"`
				Namespace string `json:"namespace"`
			} `json:"metadata"`
		}
		if err := yaml.Unmarshal([]byte(d.text), &meta); err != nil {
			return nil, fmt.Errorf("%s: rendered YAML is invalid: %w", d.template, err)
		}
		if meta.Kind == "" || meta.Metadata.Name == "" {
			return nil, fmt.Errorf("%s: a rendered document without kind or metadata.name", d.template)
		}
		base := strings.ToLower(meta.Kind + "-" + meta.Metadata.Name)
		if meta.Metadata.Namespace != "" {
			base = strings.ToLower(meta.Metadata.Namespace) + "-" + base
		}
		base = fileSafe(base)
		seen[base]++
		name := base
		if n := seen[base]; n > 1 {
			name = fmt.Sprintf("%s-%d", base, n)
		}
		var b bytes.Buffer
		fmt.Fprintf(&b, "# Source: %s\n", d.template)
		b.WriteString(d.text)
		out = append(out, Object{File: name + ".yaml", Data: b.Bytes()})
	}
	return out, nil
}

var unsafeChars = regexp.MustCompile(`[^a-z0-9._-]+`)

func fileSafe(s string) string { return unsafeChars.ReplaceAllString(s, "_") }
