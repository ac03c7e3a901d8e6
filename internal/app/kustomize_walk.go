package app

import (
	"path"
	"slices"
	"strings"

	"sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/filesys"
)

// kustomizeWalk prepares the in-memory copy of the repository for one build. It walks the
// kustomizations the build reaches from the app's folder, as kustomize does (resources,
// bases, components, and the folders of generators, transformers and validators), and
// for each one: substitutes the variables in its file, refuses anything remote it names
// (kustomize would run git or fetch a URL), and inflates its helmCharts.
type kustomizeWalk struct {
	req  *kustomizeRequest
	fs   filesys.FileSystem
	vars Vars
	// warnings are the deprecated fields of the kustomizations read, with their files.
	warnings []string
	// seen are the walks made: folder, the namespace its helmCharts inherit and whether it
	// is a plugin's (its resources are plugin configurations).
	seen map[walkKey]bool
	// parsed are the kustomizations read, by folder (in the file system, "/" first).
	parsed map[string]*kustFile
	// inflated are the folders whose helmCharts were inflated, with the namespace used.
	inflated map[string]string
}

type walkKey struct {
	dir, namespace string
	plugin         bool
}

// kustFile is a kustomization file as the build reads it: variables substituted.
type kustFile struct {
	file string // path in the repository
	data []byte
	k    *types.Kustomization
}

// prepareKustomize walks the kustomizations reached from the app's folder and writes the
// ones the build will read (substituted, with their charts inflated) into fs.
// It returns the deprecated fields the kustomizations use, with their files (kustomize
// would print them raw on the process's standard error).
func prepareKustomize(req *kustomizeRequest, fs filesys.FileSystem) ([]string, error) {
	w := &kustomizeWalk{req: req, fs: fs, vars: Vars{values: req.Values, defined: req.Defined}, seen: map[walkKey]bool{},
		parsed: map[string]*kustFile{}, inflated: map[string]string{}}
	err := w.visit(path.Join("/", req.Dir), "", false)
	return w.warnings, err
}

// visit walks the kustomization in dir. namespace is the one its helmCharts inherit from
// the kustomizations above it (kustomize passes a parent's namespace: down to the charts
// of its bases).
func (w *kustomizeWalk) visit(dir, namespace string, plugin bool) error {
	key := walkKey{dir, namespace, plugin}
	if w.seen[key] {
		return nil
	}
	w.seen[key] = true
	kf, err := w.load(dir)
	if err != nil || kf == nil {
		return err
	}
	if err := w.inflate(dir, kf, namespace); err != nil {
		return err
	}
	if kf.k.Namespace != "" {
		namespace = kf.k.Namespace
	}
	for _, e := range slices.Concat(kf.k.Resources, kf.k.Components) {
		if err := w.entry(dir, e, namespace, plugin); err != nil {
			return err
		}
	}
	for _, e := range slices.Concat(kf.k.Generators, kf.k.Transformers, kf.k.Validators) {
		if err := w.entry(dir, e, namespace, true); err != nil {
			return err
		}
	}
	return nil
}

// entry follows one entry of resources, components, generators, transformers or
// validators: a folder is a kustomization to walk; a plugin's configuration (a file, or
// inline YAML) must not name anything remote either.
func (w *kustomizeWalk) entry(dir, e, namespace string, plugin bool) error {
	p := path.Join(dir, e)
	if path.IsAbs(e) {
		p = path.Clean(e)
	}
	switch {
	case w.fs.IsDir(p) && path.IsAbs(e):
		return nil // kustomize refuses an absolute folder
	case w.fs.IsDir(p):
		return w.visit(p, namespace, plugin)
	case !plugin:
		return nil // a file of resources, or missing: kustomize says so
	}
	if data, err := w.fs.ReadFile(p); err == nil {
		return refuseRemoteConfig(strings.TrimPrefix(p, "/"), data)
	}
	return refuseRemoteConfig(w.parsed[dir].file, []byte(e)) // inline YAML
}

// load reads the kustomization in dir once: variables substituted, remote references
// refused. It returns nil when dir has no kustomization file (kustomize says so).
func (w *kustomizeWalk) load(dir string) (*kustFile, error) {
	if kf, ok := w.parsed[dir]; ok {
		return kf, nil
	}
	file := kustomizationFile(w.req.Files, strings.TrimPrefix(dir, "/"))
	if file == "" {
		w.parsed[dir] = nil
		return nil, nil
	}
	data, err := Subst(file, w.req.Files[file], w.vars)
	if err != nil {
		return nil, err
	}
	k, deprecated, err := parseKustomization(file, data)
	if err != nil {
		return nil, err
	}
	w.warnings = append(w.warnings, deprecated...)
	if err := refuseRemoteIn(file, k); err != nil {
		return nil, err
	}
	kf := &kustFile{file: file, data: data, k: k}
	w.parsed[dir] = kf
	return kf, writeFS(w.fs, "/"+file, data)
}
