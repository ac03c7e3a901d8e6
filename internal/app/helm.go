package app

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"maps"
	"path"
	"regexp"
	"slices"
	"strings"
	"time"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
	"helm.sh/helm/v3/pkg/ignore"
	"helm.sh/helm/v3/pkg/release"
	"helm.sh/helm/v3/pkg/releaseutil"
	"sigs.k8s.io/yaml"
)

// chartFiles are the chart's files as Helm loads a chart folder: those its .helmignore (and
// Helm's default rules) leave, by path in the folder.
func chartFiles(files map[string][]byte) ([]*loader.BufferedFile, error) {
	rules := ignore.Empty()
	if data, ok := files[ignore.HelmIgnore]; ok {
		r, err := ignore.Parse(bytes.NewReader(data))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", ignore.HelmIgnore, err)
		}
		rules = r
	}
	rules.AddDefaults()
	var out []*loader.BufferedFile
	for _, name := range slices.Sorted(maps.Keys(files)) {
		if helmIgnores(rules, name) {
			continue
		}
		out = append(out, &loader.BufferedFile{Name: name, Data: bytes.TrimPrefix(files[name], []byte("\xEF\xBB\xBF"))})
	}
	return out, nil
}

// helmIgnores reports whether rules leave out a file, or a folder it is in, as Helm's
// loader walks a chart folder.
func helmIgnores(rules *ignore.Rules, name string) bool {
	parts := strings.Split(name, "/")
	for i := 1; i < len(parts); i++ {
		if rules.Ignore(strings.Join(parts[:i], "/"), ignoreInfo{name: parts[i-1], dir: true}) {
			return true
		}
	}
	return rules.Ignore(name, ignoreInfo{name: path.Base(name)})
}

// ignoreInfo is the little of a file's information .helmignore rules read.
type ignoreInfo struct {
	name string
	dir  bool
}

func (f ignoreInfo) Name() string { return f.name }
func (f ignoreInfo) Size() int64  { return 0 }
func (f ignoreInfo) Mode() fs.FileMode {
	if f.dir {
		return fs.ModeDir
	}
	return 0
}
func (f ignoreInfo) ModTime() time.Time { return time.Time{} }
func (f ignoreInfo) IsDir() bool        { return f.dir }
func (f ignoreInfo) Sys() any           { return nil }

// loadChart loads a fresh copy of the chart with its values.yaml after substitution: Helm's
// dependency processing changes the chart it renders, so targets never share one.
func (a *App) loadChart(values []byte) (*chart.Chart, error) {
	files := a.helmFiles
	if values != nil {
		files = append(slices.Clip(files), &loader.BufferedFile{Name: "values.yaml", Data: values})
	}
	c, err := loader.LoadFiles(files)
	if err != nil {
		return nil, fmt.Errorf("chart %s: %w", a.ChartDir, err)
	}
	return c, nil
}

// checkChart refuses, before rendering, a chart Helm would not install: a library chart, a
// dependency missing from charts/ or not matching Chart.yaml's version or Chart.lock.
func checkChart(dir string, c *chart.Chart) error {
	switch c.Metadata.Type {
	case "", "application":
	default:
		return fmt.Errorf("chart %s: %s charts are not installable: render an application chart that depends on it", dir, c.Metadata.Type)
	}
	return checkDependencies(dir, c)
}

// checkDependencies checks the dependencies of a chart and of its subcharts.
func checkDependencies(dir string, c *chart.Chart) error {
	locked := map[string]string{}
	if c.Lock != nil {
		for _, d := range c.Lock.Dependencies {
			locked[d.Name] = d.Version
		}
	}
	for _, d := range c.Metadata.Dependencies {
		if err := checkDependency(dir, c, d, locked); err != nil {
			return err
		}
	}
	for _, sub := range c.Dependencies() {
		if err := checkDependencies(dir+"/charts/"+sub.Name(), sub); err != nil {
			return err
		}
	}
	return nil
}

// checkDependency checks that one dependency of Chart.yaml is in charts/, at a version its
// constraint and Chart.lock accept.
func checkDependency(dir string, c *chart.Chart, d *chart.Dependency, locked map[string]string) error {
	fix := fmt.Sprintf("run `helm dependency build %s` and commit %s/charts/ (make sure .gitignore does not leave it out)", dir, dir)
	var versions []string
	for _, sub := range c.Dependencies() {
		if sub.Name() != d.Name {
			continue
		}
		v := sub.Metadata.Version
		if want, ok := locked[d.Name]; ok && want != v {
			versions = append(versions, v+" (Chart.lock pins "+want+")")
			continue
		}
		if d.Version == "" || chartutil.IsCompatibleRange(d.Version, v) {
			return nil
		}
		versions = append(versions, v)
	}
	if len(versions) > 0 {
		return fmt.Errorf("chart %s: dependency %s %s: %s/charts/ holds version %s: %s", dir, d.Name, d.Version, dir, strings.Join(versions, ", "), fix)
	}
	return fmt.Errorf("chart %s: dependency %s %s (from %s) is not in %s/charts/: %s", dir, d.Name, d.Version, d.Repository, dir, fix)
}

// helmRender is how one target's chart is rendered.
type helmRender struct {
	Release, Namespace string
	Capabilities       Capabilities
	IncludeCRDs        bool
	IncludeTests       bool
	NoHooks            bool // leave every hook out (kustomize's skipHooks)
	// KeyedSchema checks the chart's values.schema.json with fleetform's validation instead
	// of Helm's: on the same values (Helm's, coalesced with the subcharts' and imported), with
	// the same library, but each problem by key (a *chartSchemaError) and no reference to
	// anything outside the schema.
	KeyedSchema bool
}

// renderHelm renders the chart as `helm template` does, with the Helm SDK functions Helm's
// install action runs in client-only mode (dependencies with their conditions, tags,
// aliases and import-values; subchart schemas; the kubeVersion constraint; hooks; CRDs): no
// cluster, no network. chartValues is the chart's values.yaml after substitution; values
// are the values above it, as helm's -f and --set make them.
func (a *App) renderHelm(ctx context.Context, chartValues []byte, values map[string]any, t Target, r helmRender, sb *Sandbox) ([]Object, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	files := a.helmFiles
	if chartValues != nil {
		files = append(slices.Clip(files), &loader.BufferedFile{Name: "values.yaml", Data: chartValues})
	}
	req := workerRequest{Chart: &chartRequest{Dir: a.ChartDir, Files: files, Values: values, Render: r}}
	var docs []doc
	var err error
	if sb != nil {
		docs, _, err = sb.render(ctx, req)
	} else {
		docs, _, err = req.render()
	}
	if err != nil {
		return nil, fmt.Errorf("target %s: %w", t.Name, err)
	}
	return nameObjects(docs, r.Namespace)
}

// renderChart renders a loaded chart (dir names it in errors) with values above its own.
// It changes the chart: load one for each render.
func renderChart(dir string, c *chart.Chart, values map[string]any, r helmRender) ([]doc, error) {
	caps, err := r.Capabilities.helm()
	if err != nil {
		return nil, err
	}
	if c.Metadata.KubeVersion != "" && !chartutil.IsCompatibleRange(c.Metadata.KubeVersion, caps.KubeVersion.String()) {
		return nil, fmt.Errorf("chart %s requires kubeVersion %s, which Kubernetes %s is not: declare the clusters' version with kubeVersion: in %s",
			dir, c.Metadata.KubeVersion, caps.KubeVersion.String(), SettingsFile)
	}
	if err := chartutil.ProcessDependenciesWithMerge(c, values); err != nil {
		return nil, fmt.Errorf("chart %s: dependencies: %w", dir, err)
	}
	opts := chartutil.ReleaseOptions{Name: r.Release, Namespace: r.Namespace, Revision: 1, IsInstall: true}
	keyed := r.KeyedSchema && c.Schema != nil
	vals, err := chartutil.ToRenderValuesWithSchemaValidation(c, values, opts, caps, keyed)
	if err != nil {
		return nil, fmt.Errorf("chart %s: values: %w", dir, err)
	}
	if keyed {
		if err := checkValuesSchemas(dir, c, vals["Values"]); err != nil {
			return nil, err
		}
	}
	var e engine.Engine
	files, err := e.Render(c, vals)
	if err != nil {
		return nil, fmt.Errorf("chart %s: %w", dir, err)
	}
	docs, err := releaseDocs(c, files, r)
	if err != nil {
		return nil, fmt.Errorf("chart %s: %w", dir, err)
	}
	return docs, nil
}

// checkValuesSchemas checks the values Helm renders a chart with (coalesced) against its
// schemas as Helm's ToRenderValuesWithSchemaValidation does: the chart's own
// values.schema.json, with fleetform's validation (a *chartSchemaError), then each enabled
// subchart's, with Helm's.
func checkValuesSchemas(dir string, c *chart.Chart, values any) error {
	coalesced, ok := values.(chartutil.Values)
	if !ok {
		return fmt.Errorf("chart %s: values: %T, not a mapping", dir, values)
	}
	schema, err := compileSchema(dir+"/values.schema.json", c.Schema)
	if err != nil {
		return fmt.Errorf("chart %s: %w", dir, err)
	}
	if problems := schema.check(coalesced); len(problems) > 0 {
		return &chartSchemaError{Chart: dir, Problems: problems}
	}
	root := c.Schema
	c.Schema = nil
	defer func() { c.Schema = root }()
	if err := chartutil.ValidateAgainstSchema(c, coalesced); err != nil {
		return fmt.Errorf("chart %s: values: values don't meet the specifications of the schema(s) in the following chart(s):\n%w", dir, err)
	}
	return nil
}

// releaseDocs are the documents of a rendered chart in the order `helm template` prints
// them: CRDs (when asked), the manifests in install order, then the hooks (test hooks only
// when asked). NOTES.txt is not a document.
func releaseDocs(c *chart.Chart, files map[string]string, r helmRender) ([]doc, error) {
	for name := range files {
		if strings.HasSuffix(name, "NOTES.txt") {
			delete(files, name)
		}
	}
	hooks, manifests, err := releaseutil.SortManifests(files, nil, releaseutil.InstallOrder)
	if err != nil {
		return nil, err
	}
	var docs []doc
	if r.IncludeCRDs {
		for _, crd := range c.CRDObjects() {
			docs = append(docs, splitDocs(crd.Filename, string(crd.File.Data))...)
		}
	}
	for _, m := range manifests {
		docs = append(docs, splitDocs(m.Name, m.Content)...)
	}
	for _, h := range hooks {
		if !r.NoHooks && (r.IncludeTests || !slices.Contains(h.Events, release.HookTest)) {
			docs = append(docs, splitDocs(h.Path, h.Manifest)...)
		}
	}
	return docs, nil
}

// Object is one rendered Kubernetes object: its file name in the target's folder and its
// YAML.
type Object struct {
	File string
	Data []byte
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
// namespace than the target's, namespace, get <namespace>- in front; a second object of the
// same name gets -2, -3…, the first such name no other object has). Documents that are not
// Kubernetes objects are an error naming the template.
func nameObjects(docs []doc, namespace string) ([]Object, error) {
	used := map[string]bool{}
	next := map[string]int{} // the suffix to try first for a name already used
	out := make([]Object, 0, len(docs))
	for _, d := range docs {
		var meta struct {
			Kind     string `json:"kind"`
			Metadata struct {
				Name      string `json:"name"`
				Namespace string `json:"namespace"`
			} `json:"metadata"`
		}
		js, err := yaml.YAMLToJSONStrict([]byte(d.text)) // strict: a key given twice is an error
		if err != nil && validLeniently(d.text) {
			return nil, fmt.Errorf("%s: %w: helm template prints it as it is, but Flux's kustomize build refuses the whole folder: "+
				"give the key once", d.template, err)
		}
		if err == nil {
			err = json.Unmarshal(js, &meta)
		}
		if err != nil {
			return nil, fmt.Errorf("%s: rendered YAML is invalid: %w", d.template, err)
		}
		if meta.Kind == "" || meta.Metadata.Name == "" {
			return nil, fmt.Errorf("%s: a rendered document without kind or metadata.name", d.template)
		}
		base := strings.ToLower(meta.Kind + "-" + meta.Metadata.Name)
		if ns := meta.Metadata.Namespace; ns != "" && ns != namespace {
			base = strings.ToLower(ns) + "-" + base
		}
		base = fileSafe(base)
		name := base
		if used[name] {
			n := max(next[base], 2)
			for used[fmt.Sprintf("%s-%d", base, n)] {
				n++
			}
			name, next[base] = fmt.Sprintf("%s-%d", base, n), n+1
		}
		used[name] = true
		var b bytes.Buffer
		fmt.Fprintf(&b, "# Source: %s\n", d.template)
		b.WriteString(d.text)
		out = append(out, Object{File: name + ".yaml", Data: b.Bytes()})
	}
	return out, nil
}

// validLeniently reports whether text reads as YAML when a key given twice is allowed.
func validLeniently(text string) bool {
	_, err := yaml.YAMLToJSON([]byte(text))
	return err == nil
}

var unsafeChars = regexp.MustCompile(`[^a-z0-9._-]+`)

func fileSafe(s string) string { return unsafeChars.ReplaceAllString(s, "_") }
