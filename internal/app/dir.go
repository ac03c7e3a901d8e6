package app

import (
	"bytes"
	"context"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
)

// WriteDir renders every target of the run into root (the root of the app GitOps
// repository): each target's files go to root/<manifests.path>, which fleetform owns
// (stale files in it are removed); nothing else under root is touched. A target that fails
// keeps what its folder had.
func (r *Run) WriteDir(ctx context.Context, root string) (*Result, error) {
	res := newResult(r)
	for _, t := range r.Targets {
		tr := targetResult(t)
		folder, err := r.Render(ctx, t)
		if err != nil {
			tr.fail(err)
			res.Targets = append(res.Targets, tr)
			continue
		}
		dir := filepath.Join(root, filepath.FromSlash(t.Target.Path))
		if !r.In.Regenerate {
			tr.Kept = folder.KeepCommitted(func(name string) ([]byte, bool) { return writtenFile(dir, name) })
		}
		changes, err := writeFolder(dir, folder.Files)
		if err != nil {
			return nil, err
		}
		for _, c := range changes {
			c.Path = t.Target.Path + "/" + c.Path
			tr.Changes = append(tr.Changes, c)
		}
		if len(tr.Changes) > 0 {
			tr.Status, res.NoChange = StatusChanged, false
		}
		res.Targets = append(res.Targets, tr)
	}
	return res, nil
}

// writtenFile reads a file of a target's folder on disk, without following a symbolic
// link out of it; a file it cannot read counts as none.
func writtenFile(dir, name string) ([]byte, bool) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, false
	}
	defer func() { _ = root.Close() }()
	data, err := root.ReadFile(filepath.FromSlash(name))
	return data, err == nil
}

// writeFolder makes dir hold exactly files (by slash path), and returns what changed.
func writeFolder(dir string, files map[string][]byte) ([]Change, error) {
	old := map[string]bool{}
	err := filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			if os.IsNotExist(err) && p == dir {
				return fs.SkipAll
			}
			return err
		}
		if !e.IsDir() {
			rel, err := filepath.Rel(dir, p)
			if err != nil {
				return err
			}
			old[filepath.ToSlash(rel)] = true
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	var changes []Change
	for _, name := range slices.Sorted(maps.Keys(files)) {
		p := filepath.Join(dir, filepath.FromSlash(name))
		action := "add"
		if old[name] {
			cur, err := os.ReadFile(p)
			if err != nil {
				return nil, err
			}
			if bytes.Equal(cur, files[name]) {
				continue
			}
			action = "modify"
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o750); err != nil {
			return nil, err
		}
		if err := os.WriteFile(p, files[name], 0o644); err != nil { //nolint:gosec // manifests are meant to be read
			return nil, err
		}
		changes = append(changes, Change{Path: name, Action: action})
	}
	for _, name := range slices.Sorted(maps.Keys(old)) {
		if _, keep := files[name]; !keep {
			if err := os.Remove(filepath.Join(dir, filepath.FromSlash(name))); err != nil {
				return nil, err
			}
			changes = append(changes, Change{Path: name, Action: "delete"})
		}
	}
	removeEmptyDirs(dir)
	return changes, nil
}

// removeEmptyDirs removes the folders below dir that stale files left empty.
func removeEmptyDirs(dir string) {
	var dirs []string
	_ = filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
		if err == nil && e.IsDir() && p != dir {
			dirs = append(dirs, p)
		}
		return nil
	})
	slices.Reverse(dirs) // deepest first
	for _, d := range dirs {
		_ = os.Remove(d) // fails when not empty, as it should
	}
}
