package app

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"path"
	"slices"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/kustomize/api/konfig"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"

	"github.com/fleetform/fleetform/internal/controlplane"
)

// Load restrictors of fleetform-app.yaml (loadRestrictor:).
const (
	LoadRootOnly = "rootOnly"
	LoadNone     = "none"
)

// loadKustomize reads a kustomize source: every file of the repository, at its path in it
// (an overlay names ../../base, a component or a chart may be anywhere), and their digest.
// Symbolic links are not files of a tree, so they are not copied and nothing outside the
// repository can be reached.
func (a *App) loadKustomize(tree controlplane.Tree, files []string) error {
	a.KustomizeDir = cleanDir(a.Settings.Kustomize)
	if a.KustomizeDir == "" {
		a.KustomizeDir = "." // the repository's root
	}
	if _, err := loadRestrictions(a.Settings.LoadRestrictor); err != nil {
		return err
	}
	a.files = make(map[string][]byte, len(files))
	h := sha256.New()
	for _, f := range files {
		data, err := tree.ReadFile(f)
		if err != nil {
			return fmt.Errorf("source %s: %w", a.Repo, err)
		}
		fmt.Fprintf(h, "%s\x00%d\x00", f, len(data))
		h.Write(data)
		a.files[f] = data
	}
	if kustomizationFile(a.files, a.KustomizeDir) == "" {
		return fmt.Errorf("source %s: no kustomization.yaml in %s/ (name the kustomization's folder with kustomize: in %s)",
			a.Repo, a.KustomizeDir, SettingsFile)
	}
	a.Digest = hex.EncodeToString(h.Sum(nil))
	a.kustomize = &kustomizeCache{builds: map[string]*kustomizeBuild{}}
	return nil
}

// loadRestrictions is kustomize's load restrictor named by loadRestrictor:.
func loadRestrictions(name string) (types.LoadRestrictions, error) {
	switch name {
	case "", LoadRootOnly:
		return types.LoadRestrictionsRootOnly, nil
	case LoadNone:
		return types.LoadRestrictionsNone, nil
	}
	return 0, fmt.Errorf("%s: loadRestrictor %q: want %s (kustomize's default) or %s", SettingsFile,
		name, LoadRootOnly, LoadNone)
}

// kustomizationFile is the name of the kustomization file in dir (a path in the
// repository, "." for its root), "" when there is none.
func kustomizationFile(files map[string][]byte, dir string) string {
	for _, name := range konfig.RecognizedKustomizationFileNames() {
		if _, ok := files[path.Join(dir, name)]; ok {
			return path.Join(dir, name)
		}
	}
	return ""
}

// kustomizeCache holds the builds of a kustomize source: the build does not depend on the
// target (only the values ConfigMap does), so it is made once per set of variables.
type kustomizeCache struct {
	mu     sync.Mutex
	builds map[string]*kustomizeBuild
}

// kustomizeBuild is one build, made once.
type kustomizeBuild struct {
	once     sync.Once
	docs     []doc
	warnings []string
	err      error
}

// build returns the build for vars, building it on first use (in sb when it is set).
func (c *kustomizeCache) build(ctx context.Context, a *App, vars Vars, sb *Sandbox) ([]doc, error) {
	key := vars.key()
	c.mu.Lock()
	b, ok := c.builds[key]
	if !ok {
		b = &kustomizeBuild{}
		c.builds[key] = b
	}
	c.mu.Unlock()
	b.once.Do(func() { b.docs, b.warnings, b.err = a.buildKustomize(ctx, vars, sb) })
	return b.docs, b.err
}

// warnings are the warnings of the builds made, sorted, each once.
func (c *kustomizeCache) warnings() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var all []string
	for _, b := range c.builds {
		all = append(all, b.warnings...)
	}
	slices.Sort(all)
	return slices.Compact(all)
}

// Warnings are what the renders made so far found worth saying without failing (a
// kustomization's deprecated fields, with its file), sorted, each once.
func (a *App) Warnings() []string {
	if a.kustomize == nil {
		return nil
	}
	return a.kustomize.warnings()
}

// renderKustomize is the kustomize build of the app's folder (shared by the targets of a
// run) and the composed values as a ConfigMap <release>-values, one key per leaf path.
func (a *App) renderKustomize(ctx context.Context, values *Values, vars Vars, target string, sb *Sandbox) ([]Object, error) {
	docs, err := a.kustomize.build(ctx, a, vars, sb)
	if err != nil {
		return nil, fmt.Errorf("target %s: %w", target, err)
	}
	cm, err := a.valuesConfigMap(values)
	if err != nil {
		return nil, fmt.Errorf("target %s: %w", target, err)
	}
	return nameObjects(append(slices.Clip(docs), cm), "")
}

// buildKustomize builds the app's folder for vars, in sb when it is set.
func (a *App) buildKustomize(ctx context.Context, vars Vars, sb *Sandbox) ([]doc, []string, error) {
	req := workerRequest{Kustomize: &kustomizeRequest{Dir: a.KustomizeDir, Files: a.files,
		LoadRestrictor: a.Settings.LoadRestrictor, EnableHelm: a.Settings.EnableHelm == nil || *a.Settings.EnableHelm,
		Values: vars.values, Defined: vars.defined}}
	if sb != nil {
		return sb.render(ctx, req)
	}
	return req.render()
}

// kustomizeRequest is one kustomize build: the source repository's files, the folder built,
// the settings the build reads and the variables.
type kustomizeRequest struct {
	Dir            string
	Files          map[string][]byte
	LoadRestrictor string
	EnableHelm     bool // kustomizations may inflate helmCharts (enableHelm:, default true)
	Values         map[string]string
	Defined        map[string]bool
}

// build builds the folder with the kustomize API on an in-memory copy of the repository
// (its root is "/"): no plugins, no exec, no network. The kustomizations the build reaches
// get the variables substituted (images: newTag: $IMAGE_TAG), are refused when they name
// anything remote, and have their helmCharts inflated with the Helm SDK (see
// prepareKustomize). The warnings are their deprecated fields, with their files.
func (req *kustomizeRequest) build() ([]doc, []string, error) {
	fs := filesys.MakeFsInMemory()
	for _, name := range slices.Sorted(maps.Keys(req.Files)) {
		if err := writeFS(fs, "/"+name, req.Files[name]); err != nil {
			return nil, nil, err
		}
	}
	warnings, err := prepareKustomize(req, fs)
	if err != nil {
		return nil, nil, err
	}
	lr, err := loadRestrictions(req.LoadRestrictor)
	if err != nil {
		return nil, nil, err
	}
	opts := krusty.MakeDefaultOptions()
	opts.LoadRestrictions = lr
	m, err := krusty.MakeKustomizer(opts).Run(fs, path.Join("/", req.Dir))
	if err != nil {
		return nil, nil, fmt.Errorf("kustomize %s: %w%s", req.Dir, err, restrictorHint(err, lr))
	}
	docs := make([]doc, 0, m.Size())
	for _, r := range m.Resources() {
		y, err := r.AsYAML()
		if err != nil {
			return nil, nil, err
		}
		docs = append(docs, doc{template: req.Dir, text: string(y)})
	}
	return docs, warnings, nil
}

// restrictorHint names the setting when kustomize refused a file outside a
// kustomization's folder.
func restrictorHint(err error, lr types.LoadRestrictions) string {
	if lr == types.LoadRestrictionsRootOnly && strings.Contains(err.Error(), "is not in or below") {
		return fmt.Sprintf(" (kustomize's default load restrictor; set loadRestrictor: %s in %s to allow it)", LoadNone, SettingsFile)
	}
	return ""
}

// writeFS writes a file into the in-memory file system, with its folders.
func writeFS(fs filesys.FileSystem, name string, data []byte) error {
	if err := fs.MkdirAll(path.Dir(name)); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	if err := fs.WriteFile(name, data); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	return nil
}

// valuesConfigMap is the composed values as a ConfigMap: key = leaf path, value = the value
// (YAML text for lists and mappings). Paths that are not valid ConfigMap keys (the path of a
// key with a dot, a '/' or a space has ["…"] in it) are refused, each with the file and line
// that set it: the API server would refuse the ConfigMap, and the target's reconciliation
// would fail.
func (a *App) valuesConfigMap(values *Values) (doc, error) {
	data := map[string]string{}
	var bad []string
	for _, p := range slices.Sorted(maps.Keys(values.Prov)) {
		if errs := validation.IsConfigMapKey(p); len(errs) > 0 {
			bad = append(bad, fmt.Sprintf("%s (set in %s): %s", p, values.Prov[p].Source, strings.Join(errs, "; ")))
			continue
		}
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
	name := a.Release() + "-values"
	if len(bad) > 0 {
		return doc{}, fmt.Errorf("the values ConfigMap %s cannot hold these keys (Kubernetes refuses them): "+
			"rename them with letters, digits, '-' and '_' only (nested keys are joined with '.'):\n  %s",
			name, strings.Join(bad, "\n  "))
	}
	b, err := yaml.Marshal(map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": name}, "data": data})
	return doc{template: "fleetform: the composed values", text: string(b)}, err
}
