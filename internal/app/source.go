package app

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"path"
	"strings"
	"time"

	yaml3 "go.yaml.in/yaml/v3"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"sigs.k8s.io/yaml"

	"github.com/fleetform/fleetform/internal/controlplane"
)

// SettingsFile is the optional settings file at the root of an application's source
// repository.
const SettingsFile = "fleetform-app.yaml"

// Settings are an application's fleetform settings (fleetform-app.yaml); every field is
// optional.
type Settings struct {
	// Workload is the path of the workload file (default: workload.yaml, else
	// workload/workload.yaml, Kalypso's place).
	Workload string `json:"workload,omitempty"`
	// Chart is the folder of the Helm chart (default: helm).
	Chart string `json:"chart,omitempty"`
	// Kustomize is the folder of a kustomization, rendered instead of a chart ("." for the
	// repository's root).
	Kustomize string `json:"kustomize,omitempty"`
	// LoadRestrictor is kustomize's load restrictor: rootOnly (the default, kustomize's) or
	// none (files outside a kustomization's folder may be read, as Flux builds).
	LoadRestrictor string `json:"loadRestrictor,omitempty"`
	// EnableHelm lets kustomizations inflate helmCharts (default true), with the Helm SDK
	// from charts vendored in the repository.
	EnableHelm *bool `json:"enableHelm,omitempty"`
	// Schema is a JSON Schema file for the composed values (default: the chart's
	// values.schema.json, when there is one). Helm's check of the chart's own
	// values.schema.json stays: a chart is rendered only with values it accepts.
	Schema string `json:"schema,omitempty"`
	// ReleaseName is Helm's .Release.Name (default: the workload's name).
	ReleaseName string `json:"releaseName,omitempty"`
	// Capabilities are the Kubernetes version and API versions charts are rendered for;
	// Environments and Targets change them for an environment or a deployment target.
	Capabilities `json:",inline"`
	Environments map[string]Capabilities `json:"environments,omitempty"`
	Targets      map[string]Capabilities `json:"targets,omitempty"`
	// IncludeCRDs writes the chart's crds/ folder with its objects (default true, as Flux's
	// HelmRelease creates them).
	IncludeCRDs *bool `json:"includeCRDs,omitempty"`
	// IncludeTests writes the chart's test hooks (helm.sh/hook: test), left out by default.
	IncludeTests bool `json:"includeTests,omitempty"`
	// Variables are the names substituted in values and kustomization files besides the
	// --var names, VERSION and IMAGE_TAG ($IMAGE_NAME, ${REGION}): a declared variable the
	// command gives no value is an error, where any other $word is left as it is.
	Variables []string `json:"variables,omitempty"`
	// Promotion holds the gates of each environment an application is promoted into, by
	// environment name.
	Promotion map[string]PromotionGates `json:"promotion,omitempty"`
}

// PromotionGates are the gates of promoting an application into one environment, the same
// as the platform's (Environment.spec.promotion).
type PromotionGates struct {
	// From is the environment it is promoted from (default: --from).
	From string `json:"from,omitempty"`
	// MinCompliantPercent of each deployment target's clusters must be compliant (default 100).
	MinCompliantPercent *int `json:"minCompliantPercent,omitempty"`
	// Soak is how long the source environment must have been unchanged and compliant.
	Soak string `json:"soak,omitempty"`
	// Approval requires an approval (fleetform approve) of the source commit.
	Approval bool `json:"approval,omitempty"`
}

// SoakDuration parses Soak.
func (g PromotionGates) SoakDuration() (time.Duration, error) {
	if g.Soak == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(g.Soak)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("%s: promotion soak %q is not a duration (for example 30m or 24h)", SettingsFile, g.Soak)
	}
	return d, nil
}

// App is an application's source repository, read at one commit.
type App struct {
	Settings Settings
	Workload *controlplane.Workload
	// Commit is the source commit ("" for a directory).
	Commit string
	// Repo names the source repository in messages.
	Repo string
	// ChartDir or KustomizeDir is what is rendered.
	ChartDir, KustomizeDir string
	// chartValues is the chart's values.yaml (nil when it has none); the lowest layer.
	chartValues []byte
	// files are the chart's files by path in its folder, or for kustomize every file of
	// the repository by path in it.
	files     map[string][]byte
	helmFiles []*loader.BufferedFile // the chart's files Helm loads (.helmignore applied), but values.yaml
	random    bool                   // the chart's templates call random functions
	Schema    *Schema
	// Digest identifies what is rendered: the chart's files (for kustomize, every file of
	// the repository) and the schema.
	Digest    string
	kustomize *kustomizeCache // the kustomize builds, one per set of variables
}

// LoadSource reads an application's source repository.
func LoadSource(tree controlplane.Tree, repo string) (*App, error) {
	a := &App{Commit: tree.Revision(), Repo: repo}
	files, err := tree.Files()
	if err != nil {
		return nil, fmt.Errorf("source %s: %w", repo, err)
	}
	has := map[string]bool{}
	for _, f := range files {
		has[f] = true
	}
	if has[SettingsFile] {
		data, err := tree.ReadFile(SettingsFile)
		if err != nil {
			return nil, err
		}
		if err := yaml.UnmarshalStrict(data, &a.Settings); err != nil {
			return nil, fmt.Errorf("%s: %w", SettingsFile, err)
		}
		if err := checkVariables(data, a.Settings.Variables); err != nil {
			return nil, err
		}
	}
	if err := a.loadWorkload(tree, has); err != nil {
		return nil, err
	}
	if err := a.Settings.check(); err != nil {
		return nil, err
	}
	if err := a.loadRendered(tree, files, has); err != nil {
		return nil, err
	}
	if err := a.checkRelease(); err != nil {
		return nil, err
	}
	return a, a.loadSchema(tree, has)
}

func (a *App) loadWorkload(tree controlplane.Tree, has map[string]bool) error {
	file := a.Settings.Workload
	switch {
	case file != "":
	case has["workload.yaml"]:
		file = "workload.yaml"
	case has["workload/workload.yaml"]:
		file = "workload/workload.yaml"
	default:
		return fmt.Errorf("source %s: no workload.yaml (nor workload/workload.yaml; or name it with workload: in %s)", a.Repo, SettingsFile)
	}
	if !has[file] {
		return fmt.Errorf("%s: workload: %q is not a file of the source repository (a path in it, not a symbolic link)", SettingsFile, file)
	}
	data, err := tree.ReadFile(file)
	if err != nil {
		return fmt.Errorf("source %s: %w", a.Repo, err)
	}
	ws, diags := controlplane.DecodeWorkloads(data, controlplane.Source{File: file, Commit: a.Commit})
	if controlplane.HasErrors(diags) {
		return diagError(diags)
	}
	if len(ws) != 1 {
		return fmt.Errorf("%s: want one Workload, found %d", file, len(ws))
	}
	a.Workload = ws[0]
	return nil
}

func (a *App) loadRendered(tree controlplane.Tree, files []string, has map[string]bool) error {
	dir := a.Settings.Chart
	if a.Settings.Kustomize != "" {
		if dir != "" {
			return fmt.Errorf("%s: chart and kustomize are exclusive: name one", SettingsFile)
		}
		return a.loadKustomize(tree, files)
	}
	if dir == "" {
		dir = "helm"
	}
	a.ChartDir = cleanDir(dir)
	dir = a.ChartDir
	if !has[dir+"/Chart.yaml"] {
		return fmt.Errorf("source %s: no Helm chart at %s/ (no Chart.yaml; name the folder with chart: or kustomize: in %s)", a.Repo, dir, SettingsFile)
	}
	a.files = map[string][]byte{}
	h := sha256.New()
	for _, f := range files {
		rel, ok := strings.CutPrefix(f, dir+"/")
		if !ok {
			continue
		}
		data, err := tree.ReadFile(f)
		if err != nil {
			return err
		}
		fmt.Fprintf(h, "%s\x00%d\x00", rel, len(data))
		h.Write(data)
		if a.ChartDir != "" && rel == "values.yaml" {
			a.chartValues = data
			continue
		}
		a.files[rel] = data
	}
	if len(a.files) == 0 {
		return fmt.Errorf("source %s: %s/ is empty", a.Repo, dir)
	}
	if a.ChartDir != "" {
		var err error
		if a.helmFiles, err = chartFiles(a.files); err != nil { // a.files has no values.yaml: it is substituted first
			return fmt.Errorf("source %s: chart %s: %w", a.Repo, dir, err)
		}
		c, err := a.loadChart(nil)
		if err != nil {
			return fmt.Errorf("source %s: %w", a.Repo, err)
		}
		a.random = usesRandom(c)
	}
	a.Digest = hex.EncodeToString(h.Sum(nil))
	return nil
}

func (a *App) loadSchema(tree controlplane.Tree, has map[string]bool) error {
	file := a.Settings.Schema
	if chartSchema := a.chartSchemaFile(); chartSchema != "" && has[chartSchema] {
		if file == "" {
			file = chartSchema
		} else if file != chartSchema {
			// Checked when a target is rendered, as Helm checks it: refused now when it
			// cannot be compiled.
			if _, err := compileSchema(chartSchema, a.files["values.schema.json"]); err != nil {
				return err
			}
		}
	}
	if file == "" {
		return nil
	}
	if !has[file] {
		return fmt.Errorf("%s: schema: %q is not a file of the source repository (a path in it, not a symbolic link)", SettingsFile, file)
	}
	data, err := tree.ReadFile(file)
	if err != nil {
		return fmt.Errorf("source %s: schema: %w", a.Repo, err)
	}
	a.Schema, err = compileSchema(file, data)
	if err != nil {
		return err
	}
	sum := sha256.Sum256(append([]byte(a.Digest), data...))
	a.Digest = hex.EncodeToString(sum[:])
	return nil
}

// chartSchemaFile is the path of the chart's values.schema.json in the source repository
// ("" for kustomize). Helm checks the values a chart is rendered with against it, and so does
// a target's render (fleetform does not check the composed values against it: Helm's values
// also hold the subcharts' defaults and imported values).
func (a *App) chartSchemaFile() string {
	if a.ChartDir == "" {
		return ""
	}
	return a.ChartDir + "/values.schema.json"
}

// Release is the release name charts are rendered with: releaseName, else the workload's
// name.
func (a *App) Release() string {
	if a.Settings.ReleaseName != "" {
		return a.Settings.ReleaseName
	}
	return a.Workload.Metadata.Name
}

// checkRelease refuses a release name Helm refuses, before anything is rendered.
func (a *App) checkRelease() error {
	if a.Settings.ReleaseName != "" || a.ChartDir == "" {
		return nil // checked with the settings
	}
	if err := chartutil.ValidateReleaseName(a.Release()); err != nil {
		return fmt.Errorf("%s: the workload's name %q is not a valid Helm release name (%w): name one with releaseName: in %s",
			a.Workload.Source.File, a.Release(), err, SettingsFile)
	}
	return nil
}

// checkVariables refuses a declared variable that is not a shell variable name, naming its
// line in the settings file (data).
func checkVariables(data []byte, names []string) error {
	for i, name := range names {
		if !IsVarName(name) {
			return fmt.Errorf("%s:%d: variables: %q is not a variable name: write it as in $NAME (letters, digits and _, not starting with a digit)",
				SettingsFile, listItemLine(data, "variables", i), name)
		}
	}
	return nil
}

// listItemLine returns the line of item i of the list at key of a YAML mapping (1 when it
// cannot be found).
func listItemLine(data []byte, key string, i int) int {
	var doc yaml3.Node
	if yaml3.Unmarshal(data, &doc) != nil || len(doc.Content) == 0 {
		return 1
	}
	m := resolve(doc.Content[0])
	for j := 0; j+1 < len(m.Content); j += 2 {
		if list := resolve(m.Content[j+1]); m.Content[j].Value == key && list.Kind == yaml3.SequenceNode && i < len(list.Content) {
			return list.Content[i].Line
		}
	}
	return 1
}

// ChartValuesFile is the path of the chart's values.yaml in the source repository.
func (a *App) ChartValuesFile() string { return a.ChartDir + "/values.yaml" }

// Targets returns the deployment targets of environment env, in workload order.
func (a *App) Targets(env string) []Target {
	var out []Target
	for i, t := range a.Workload.Spec.DeploymentTargets {
		if t.Environment == env {
			out = append(out, Target{Name: t.Name, Environment: t.Environment, Namespace: t.Namespace, Index: i,
				Repo: t.Manifests["repo"], Branch: t.Manifests["branch"], Path: cleanDir(t.Manifests["path"])})
		}
	}
	return out
}

// Target is a deployment target of the application and where its manifests go.
type Target struct {
	Name        string `json:"name"`
	Environment string `json:"environment"`
	// Namespace is the namespace the target declares it runs in, or "".
	Namespace string `json:"namespace,omitempty"`
	Repo      string `json:"repo"`
	Branch    string `json:"branch"`
	Path      string `json:"path"`
	Index     int    `json:"-"`
}

func cleanDir(p string) string {
	p = path.Clean("/" + strings.TrimSpace(p))
	return strings.Trim(p, "/")
}

// diagError joins the error diagnostics into one error.
func diagError(diags []controlplane.Diagnostic) error {
	var msgs []string
	for _, d := range diags {
		if d.Severity == controlplane.SeverityError {
			msgs = append(msgs, d.Error())
		}
	}
	return fmt.Errorf("%s", strings.Join(msgs, "\n"))
}

// now is the time commits are made at (a variable for tests).
var now = time.Now
