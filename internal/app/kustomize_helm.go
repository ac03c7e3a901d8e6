package app

import (
	"bytes"
	"fmt"
	"path"
	"slices"
	"strings"

	"helm.sh/helm/v3/pkg/chart"
	"sigs.k8s.io/kustomize/api/konfig"
	"sigs.k8s.io/kustomize/api/provider"
	"sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/kio"
	kyaml "sigs.k8s.io/kustomize/kyaml/yaml"
)

// helmComponent is the folder, next to a kustomization with helmCharts, of the component
// that holds its inflated charts.
const helmComponent = ".fleetform-helmcharts"

// inflate replaces the helmCharts of the kustomization in dir by what kustomize's
// HelmChartInflationGenerator would generate, rendered with the Helm SDK instead of a
// helm binary: each chart's objects go to a file of a component, listed first in the
// kustomization's components (kustomize adds a generator's objects after the
// kustomization's resources and its configMap and secret generators, before its
// components), and marked as Helm's (kustomize's namespace: does not change them).
// namespace is the one inherited from the kustomizations above.
func (w *kustomizeWalk) inflate(dir string, kf *kustFile, namespace string) error {
	if len(kf.k.HelmCharts) == 0 {
		return nil
	}
	if !w.req.EnableHelm {
		return fmt.Errorf("%s: helmCharts: enableHelm is false in %s (set enableHelm: true to inflate the charts, or remove helmCharts)",
			kf.file, SettingsFile)
	}
	if prev, ok := w.inflated[dir]; ok {
		if prev != namespace {
			return fmt.Errorf("%s: helmCharts: reached from kustomizations with namespaces %q and %q; fleetform inflates a kustomization's charts once (give each chart its namespace:)",
				kf.file, prev, namespace)
		}
		return nil
	}
	w.inflated[dir] = namespace
	home := path.Join(dir, helmComponent)
	if w.fs.Exists(home) {
		return fmt.Errorf("%s: %s/ exists: fleetform puts the inflated helmCharts there (rename it)", kf.file, strings.TrimPrefix(home, "/"))
	}
	var comp strings.Builder
	comp.WriteString("apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\nresources:\n")
	for i, c := range kf.k.HelmCharts {
		out, err := w.inflateChart(dir, kf, c, namespace)
		if err != nil {
			return err
		}
		name := fmt.Sprintf("chart-%d.yaml", i)
		if err := writeFS(w.fs, home+"/"+name, out); err != nil {
			return err
		}
		fmt.Fprintf(&comp, "- %s\n", name)
	}
	if err := writeFS(w.fs, home+"/kustomization.yaml", []byte(comp.String())); err != nil {
		return err
	}
	data, err := withHelmComponent(kf.data)
	if err != nil {
		return fmt.Errorf("%s: %w", kf.file, err)
	}
	return writeFS(w.fs, "/"+kf.file, data)
}

// withHelmComponent is a kustomization without its Helm fields, the component of its
// inflated charts first in its components.
func withHelmComponent(data []byte) ([]byte, error) {
	rn, err := kyaml.Parse(string(data))
	if err != nil {
		return nil, err
	}
	for _, f := range []string{"helmCharts", "helmChartInflationGenerator", "helmGlobals"} {
		if err := rn.PipeE(kyaml.Clear(f)); err != nil {
			return nil, err
		}
	}
	seq, err := rn.Pipe(kyaml.LookupCreate(kyaml.SequenceNode, "components"))
	if err != nil {
		return nil, err
	}
	seq.YNode().Content = slices.Insert(seq.YNode().Content, 0, kyaml.NewScalarRNode(helmComponent).YNode())
	s, err := rn.String()
	return []byte(s), err
}

// inflateChart renders one helmCharts entry of the kustomization in dir as `helm template`
// does when kustomize runs it: the chart from chartHome, the values merged as kustomize
// merges them, client-only.
func (w *kustomizeWalk) inflateChart(dir string, kf *kustFile, c types.HelmChart, namespace string) ([]byte, error) {
	if c.Name == "" || strings.HasPrefix(c.Name, "-") {
		return nil, fmt.Errorf("%s: helmCharts: chart name %q is empty or starts with '-'", kf.file, c.Name)
	}
	name, err := helmReleaseName(kf.file, c)
	if err != nil {
		return nil, err
	}
	home := chartHome(dir, kf.k.HelmGlobals, c)
	chartDir := path.Join(home, c.Name)
	if !w.fs.IsDir(chartDir) {
		return nil, missingChart(kf.file, c, home)
	}
	vals, err := w.chartValues(dir, kf.file, c, chartDir)
	if err != nil {
		return nil, err
	}
	ch, err := loadChartFiles(w.req.Files, strings.TrimPrefix(chartDir, "/"))
	if err != nil {
		return nil, fmt.Errorf("%s: helmCharts: chart %s: %w", kf.file, strings.TrimPrefix(chartDir, "/"), err)
	}
	ns := c.Namespace
	for _, n := range []string{kf.k.Namespace, namespace, "default"} { // helm's default
		if ns == "" {
			ns = n
		}
	}
	out, err := helmTemplate(strings.TrimPrefix(chartDir, "/"), ch, vals, c, name, ns)
	if err != nil {
		return nil, fmt.Errorf("%s: helmCharts: chart %s: %w", kf.file, strings.TrimPrefix(chartDir, "/"), err)
	}
	if out, err = markHelmGenerated(out); err != nil {
		return nil, fmt.Errorf("%s: helmCharts: chart %s: %w", kf.file, strings.TrimPrefix(chartDir, "/"), err)
	}
	return out, nil
}

// helmReleaseName is the release name kustomize gives helm: releaseName, or nameTemplate
// rendered. Without either, kustomize has helm generate a name from the clock, which
// fleetform refuses (a render must not depend on when it runs).
func helmReleaseName(file string, c types.HelmChart) (string, error) {
	switch {
	case c.ReleaseName != "" && c.NameTemplate != "":
		return "", fmt.Errorf("%s: helmCharts: chart %s: cannot set both releaseName and nameTemplate (helm refuses it)", file, c.Name)
	case strings.HasPrefix(c.ReleaseName, "-"):
		return "", fmt.Errorf("%s: helmCharts: chart %s: releaseName %q starts with '-'", file, c.Name, c.ReleaseName)
	case c.ReleaseName != "":
		return c.ReleaseName, nil
	case c.NameTemplate != "":
		return "", fmt.Errorf("%s: helmCharts: chart %s: nameTemplate is not supported (its template could read the environment or the clock): name the release with releaseName",
			file, c.Name)
	}
	return "", fmt.Errorf("%s: helmCharts: chart %s has no releaseName: kustomize would have helm generate one from the clock (name it with releaseName:)",
		file, c.Name)
}

// chartHome is where kustomize looks for a chart: helmGlobals.chartHome (default charts)
// in the kustomization's folder, and in it <name>-<version>/ when the entry names a repo
// and a version (where kustomize's helm pull would put it).
func chartHome(dir string, g *types.HelmGlobals, c types.HelmChart) string {
	home := types.HelmDefaultHome
	if g != nil && g.ChartHome != "" {
		home = g.ChartHome
	}
	if !path.IsAbs(home) {
		home = path.Join(dir, home)
	}
	if c.Version != "" && c.Repo != "" {
		home = path.Join(home, c.Name+"-"+c.Version)
	}
	return path.Clean(home)
}

// missingChart is the error for a chart that is not in the repository: fleetform does not
// pull charts.
func missingChart(file string, c types.HelmChart, home string) error {
	where := strings.TrimPrefix(path.Join(home, c.Name), "/")
	if c.Repo == "" {
		return fmt.Errorf("%s: helmCharts: no chart %s at %s/ and no repo to pull it from (put the chart there)", file, c.Name, where)
	}
	ref, repo := c.Name, " --repo "+c.Repo
	if strings.HasPrefix(c.Repo, "oci://") {
		ref, repo = strings.TrimSuffix(c.Repo, "/")+"/"+c.Name, ""
	}
	version, flag := c.Version, " --version "+c.Version
	if c.Version == "" {
		version, flag = "(latest)", ""
	}
	return fmt.Errorf("%s: helmCharts: fleetform renders without network: vendor chart %s version %s into %s/ (helm pull %s%s%s --untar --untardir %s)",
		file, c.Name, version, where, ref, repo, flag, strings.TrimPrefix(home, "/"))
}

// helmTemplate renders a chart client-only as `helm template` does with the flags kustomize
// passes (--namespace, --include-crds, --skip-tests, --no-hooks, --api-versions,
// --kube-version): the manifest, then the hooks.
func helmTemplate(dir string, ch *chart.Chart, vals map[string]any, c types.HelmChart, name, namespace string) ([]byte, error) {
	if err := checkChart(dir, ch); err != nil {
		return nil, err
	}
	docs, err := renderChart(dir, ch, vals, helmRender{Release: name, Namespace: namespace,
		Capabilities: Capabilities{KubeVersion: c.KubeVersion, APIVersions: c.ApiVersions},
		IncludeCRDs:  c.IncludeCRDs, IncludeTests: !c.SkipTests, NoHooks: c.SkipHooks})
	if err != nil {
		return nil, err
	}
	var out bytes.Buffer
	for _, d := range docs {
		fmt.Fprintf(&out, "---\n# Source: %s\n%s", d.template, d.text)
	}
	return out.Bytes(), nil
}

// markHelmGenerated annotates each object as kustomize's generator does: kustomize's
// namespace: leaves such objects to Helm, and the annotation is removed from the output.
// The output is read as the generator reads helm's: a FooList with items is replaced by its
// items, placed after the other objects, so that each of them carries the annotation (on
// the List itself, it would be lost when the component's file is loaded).
func markHelmGenerated(out []byte) ([]byte, error) {
	nodes, err := provider.NewDefaultDepProvider().GetResourceFactory().RNodesFromBytes(out)
	if err != nil {
		return nil, fmt.Errorf("helm output: %w", err)
	}
	for _, n := range nodes {
		if err := n.PipeE(kyaml.SetAnnotation(konfig.HelmGeneratedAnnotation, "true")); err != nil {
			return nil, err
		}
	}
	s, err := kio.StringAll(nodes)
	return []byte(s), err
}
