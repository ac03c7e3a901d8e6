package app

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path"
	"slices"
	"strings"
)

// WriteDir renders every target of the run into root (the root of the app GitOps
// repository): each target's files go to root/<manifests.path>, which fleetform owns
// (stale files in it are removed); nothing else under root is touched. Everything is
// written through an os.Root of root, and a symbolic link inside it where a target's files
// go is refused: nothing is written outside root, nor through a link. A target that fails
// keeps what its folder had.
func (r *Run) WriteDir(ctx context.Context, root string) (*Result, error) {
	if err := os.MkdirAll(root, 0o755); err != nil { //nolint:gosec // a GitOps tree is meant to be read and committed
		return nil, err
	}
	out, err := os.OpenRoot(root)
	if err != nil {
		return nil, err
	}
	defer func() { _ = out.Close() }()
	res := newResult(r)
	for _, t := range r.Targets {
		tr := targetResult(t)
		folder, err := r.Render(ctx, t)
		if err == nil {
			err = checkNoLinks(out, t.Target.Path)
		}
		if err != nil {
			tr.fail(err)
			res.Targets = append(res.Targets, tr)
			continue
		}
		dir := t.Target.Path
		if !r.In.Regenerate {
			tr.Kept = folder.KeepCommitted(func(name string) ([]byte, bool) {
				data, err := out.ReadFile(path.Join(dir, name))
				return data, err == nil
			})
		}
		changes, err := writeFolder(out, dir, folder.Files)
		if err != nil {
			return nil, err
		}
		for _, c := range changes {
			c.Path = dir + "/" + c.Path
			tr.Changes = append(tr.Changes, c)
		}
		if len(tr.Changes) > 0 {
			tr.Status, res.NoChange = StatusChanged, false
		}
		res.Targets = append(res.Targets, tr)
	}
	res.Warnings = r.In.App.Warnings()
	return res, nil
}

// errLink is a symbolic link where a target's files go.
var errLink = errors.New("is a symbolic link: fleetform app does not write through symbolic links inside the output folder (remove it, or render into another folder)")

// checkNoLinks refuses a target whose folder, any folder above it, or anything in it (where
// the render writes or removes) is a symbolic link.
func checkNoLinks(out *os.Root, dir string) error {
	parts := strings.Split(dir, "/")
	for i := range parts {
		if err := notLink(out, strings.Join(parts[:i+1], "/")); err != nil {
			return err
		}
	}
	return fs.WalkDir(out.FS(), dir, func(p string, e fs.DirEntry, err error) error {
		switch {
		case errors.Is(err, fs.ErrNotExist) && p == dir:
			return fs.SkipAll
		case err != nil:
			return err
		case e.Type()&fs.ModeSymlink != 0:
			return fmt.Errorf("%s %w", p, errLink)
		}
		return nil
	})
}

// notLink fails when p inside out is a symbolic link (absent is fine).
func notLink(out *os.Root, p string) error {
	fi, err := out.Lstat(p)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return err
	case fi.Mode()&fs.ModeSymlink != 0:
		return fmt.Errorf("%s %w", p, errLink)
	}
	return nil
}

// writeFolder makes dir inside out hold exactly files (by slash path), and returns what
// changed.
func writeFolder(out *os.Root, dir string, files map[string][]byte) ([]Change, error) {
	old := map[string]bool{}
	err := fs.WalkDir(out.FS(), dir, func(p string, e fs.DirEntry, err error) error {
		switch {
		case errors.Is(err, fs.ErrNotExist) && p == dir:
			return fs.SkipAll
		case err != nil:
			return err
		case !e.IsDir():
			old[strings.TrimPrefix(p, dir+"/")] = true
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	var changes []Change
	for _, name := range slices.Sorted(maps.Keys(files)) {
		p := path.Join(dir, name)
		action := "add"
		if old[name] {
			cur, err := out.ReadFile(p)
			if err != nil {
				return nil, err
			}
			if bytes.Equal(cur, files[name]) {
				continue
			}
			action = "modify"
		}
		if err := out.MkdirAll(path.Dir(p), 0o750); err != nil {
			return nil, err
		}
		if err := out.WriteFile(p, files[name], 0o644); err != nil { //nolint:gosec // manifests are meant to be read
			return nil, err
		}
		changes = append(changes, Change{Path: name, Action: action})
	}
	for _, name := range slices.Sorted(maps.Keys(old)) {
		if _, keep := files[name]; !keep {
			if err := out.Remove(path.Join(dir, name)); err != nil {
				return nil, err
			}
			changes = append(changes, Change{Path: name, Action: "delete"})
		}
	}
	removeEmptyDirs(out, dir)
	return changes, nil
}

// removeEmptyDirs removes the folders below dir that stale files left empty.
func removeEmptyDirs(out *os.Root, dir string) {
	var dirs []string
	_ = fs.WalkDir(out.FS(), dir, func(p string, e fs.DirEntry, err error) error {
		if err == nil && e.IsDir() && p != dir {
			dirs = append(dirs, p)
		}
		return nil
	})
	slices.Reverse(dirs) // deepest first
	for _, d := range dirs {
		_ = out.Remove(d) // fails when not empty, as it should
	}
}
