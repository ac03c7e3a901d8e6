// Package fluxbuild builds a folder of manifests as Flux's kustomize-controller builds the
// path of a Kustomization (fluxcd/pkg/kustomize: Generator, then Build), so tests can check
// that what fleetform writes is what a cluster can apply.
package fluxbuild

import (
	"fmt"
	"io/fs"
	"maps"
	"path"
	"slices"
	"strings"

	"sigs.k8s.io/kustomize/api/konfig"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/api/resource"
	kustypes "sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"
)

// Build builds folder dir of files (by slash path from the repository's root) as Flux
// does: the folder's kustomization.yaml, or one listing every YAML file and every folder
// with its own kustomization below dir when there is none; targetNamespace, when set, as
// the kustomization's namespace; no load restrictions, builtin plugins only.
func Build(files map[string][]byte, dir, targetNamespace string) ([]*resource.Resource, error) {
	fsys := filesys.MakeFsInMemory()
	for _, name := range slices.Sorted(maps.Keys(files)) {
		p := "/" + name
		if err := fsys.MkdirAll(path.Dir(p)); err != nil {
			return nil, err
		}
		if err := fsys.WriteFile(p, files[name]); err != nil {
			return nil, err
		}
	}
	root := path.Clean("/" + dir)
	kus, kfile, err := kustomization(fsys, root)
	if err != nil {
		return nil, err
	}
	if targetNamespace != "" {
		kus.Namespace = targetNamespace
	}
	data, err := yaml.Marshal(kus)
	if err != nil {
		return nil, err
	}
	if err := fsys.WriteFile(kfile, data); err != nil {
		return nil, err
	}
	k := krusty.MakeKustomizer(&krusty.Options{LoadRestrictions: kustypes.LoadRestrictionsNone, PluginConfig: kustypes.DisabledPluginConfig()})
	m, err := k.Run(fsys, root)
	if err != nil {
		return nil, fmt.Errorf("kustomize build %s (targetNamespace %q): %w", dir, targetNamespace, err)
	}
	return m.Resources(), nil
}

// kustomization reads the folder's kustomization, or makes the one Flux generates.
func kustomization(fsys filesys.FileSystem, root string) (*kustypes.Kustomization, string, error) {
	kus := &kustypes.Kustomization{TypeMeta: kustypes.TypeMeta{APIVersion: kustypes.KustomizationVersion, Kind: kustypes.KustomizationKind}}
	for _, name := range konfig.RecognizedKustomizationFileNames() {
		kpath := path.Join(root, name)
		if fsys.Exists(kpath) && !fsys.IsDir(kpath) {
			data, err := fsys.ReadFile(kpath)
			if err != nil {
				return nil, "", err
			}
			if err := yaml.Unmarshal(data, kus); err != nil {
				return nil, "", fmt.Errorf("%s: %w", kpath, err)
			}
			if len(kus.Resources) == 0 {
				kus.BuildMetadata = []string{"originAnnotations"}
			}
			return kus, kpath, nil
		}
	}
	resources, err := scan(fsys, root)
	if err != nil {
		return nil, "", err
	}
	if len(resources) == 0 {
		kus.Namespace = "_placeholder"
	}
	kus.Resources = resources
	return kus, path.Join(root, konfig.DefaultKustomizationFileName()), nil
}

// scan lists what Flux's generator lists: YAML files, and folders with a kustomization of
// their own (not descended into), relative to root.
func scan(fsys filesys.FileSystem, root string) ([]string, error) {
	var out []string
	err := fsys.Walk(root, func(p string, info fs.FileInfo, err error) error {
		if err != nil || p == root {
			return err
		}
		if info.IsDir() {
			for _, name := range konfig.RecognizedKustomizationFileNames() {
				if fsys.Exists(path.Join(p, name)) {
					out = append(out, "."+strings.TrimPrefix(p, root))
					return fs.SkipDir
				}
			}
			return nil
		}
		if ext := path.Ext(p); ext == ".yaml" || ext == ".yml" {
			out = append(out, "."+strings.TrimPrefix(p, root))
		}
		return nil
	})
	return out, err
}
