package authoring

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/fleetform/fleetform/internal/controlplane"
)

// snapshotDirs copies a directory's files (without .git) into a temporary folder, with
// the changes applied when withChanges; cleanup removes it.
func (ws *workspace) copyDir(withChanges bool) (dir string, cleanup func(), err error) {
	dir, err = os.MkdirTemp("", "fleetform-authoring-*")
	if err != nil {
		return "", nil, err
	}
	cleanup = func() { _ = os.RemoveAll(dir) }
	err = filepath.WalkDir(ws.dir, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if e.IsDir() && e.Name() == ".git" {
			return filepath.SkipDir
		}
		if !e.Type().IsRegular() {
			return nil
		}
		rel, err := filepath.Rel(ws.dir, p)
		if err != nil {
			return err
		}
		data, err := os.ReadFile(p) //nolint:gosec // a copy of the user's own control plane, read-only
		if err != nil {
			return err
		}
		return writeFile(filepath.Join(dir, rel), data)
	})
	if err == nil && withChanges {
		err = applyToDir(dir, ws.changes)
	}
	if err != nil {
		cleanup()
		return "", nil, err
	}
	return dir, cleanup, nil
}

func writeFile(p string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil { //nolint:gosec // folders of a repository's work tree
		return err
	}
	return os.WriteFile(p, data, 0o644) //nolint:gosec // control-plane files are not secret
}

// applyToDir writes the changes into dir (a control plane's folder, or a work tree), through
// an os.Root of it: nothing is written outside it, and a path through a symbolic link is
// refused (the loader does not follow links, so a file written there would not be read).
// Every new content is written in full to a temporary file beside its file first, then each
// is renamed over its file: a failure before the renames (a full disk) leaves every file as
// it was, and no file is ever half written. Then the removals, and the folders they leave
// empty.
func applyToDir(dir string, changes map[fileKey][]byte) error {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return err
	}
	defer func() { _ = root.Close() }()
	keys := slices.SortedFunc(maps.Keys(changes), func(a, b fileKey) int { return strings.Compare(a.path, b.path) })
	for _, k := range keys {
		if err := checkPlace(root, k.path); err != nil {
			return fmt.Errorf("write %s: %w (nothing was changed)", k.path, err)
		}
	}
	staged := map[string]string{} // file -> its temporary file
	defer func() {
		for _, tmp := range staged {
			_ = root.Remove(tmp)
		}
	}()
	for _, k := range keys {
		if c := changes[k]; c != nil {
			tmp, err := stageFile(root, k.path, c)
			if err != nil {
				return fmt.Errorf("write %s: %w (nothing was changed)", k.path, err)
			}
			staged[k.path] = tmp
		}
	}
	for _, k := range keys {
		if tmp, ok := staged[k.path]; ok {
			if err := root.Rename(tmp, k.path); err != nil {
				return fmt.Errorf("write %s: %w", k.path, err)
			}
			delete(staged, k.path)
		}
	}
	for _, k := range keys {
		if changes[k] == nil {
			if err := removeFile(root, k.path); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkPlace refuses a file's slash path inside root that is, or goes through, a symbolic
// link, that goes through a file, or that is a folder.
func checkPlace(root *os.Root, p string) error {
	parts := strings.Split(p, "/")
	for i := range parts {
		sub := strings.Join(parts[:i+1], "/")
		fi, err := root.Lstat(sub)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return nil
		case err != nil:
			return err
		case fi.Mode()&fs.ModeSymlink != 0:
			return fmt.Errorf("%s is a symbolic link: fleetform does not write through links in the control plane "+
				"(it does not read through them either); replace the link with the folder or file itself", sub)
		case i < len(parts)-1 && !fi.IsDir():
			return fmt.Errorf("%s is a file, where a folder would go: rename or remove it", sub)
		case i == len(parts)-1 && fi.IsDir():
			return fmt.Errorf("%s is a folder, where a file would go: rename or remove it", sub)
		}
	}
	return nil
}

// stageFile writes data, synced to disk, to a new temporary file beside p (its folders made)
// and returns its path.
func stageFile(root *os.Root, p string, data []byte) (string, error) {
	if err := root.MkdirAll(path.Dir(p), 0o755); err != nil { //nolint:gosec // folders of a repository's work tree
		return "", err
	}
	var suffix [6]byte
	if _, err := rand.Read(suffix[:]); err != nil {
		return "", err
	}
	tmp := path.Join(path.Dir(p), "."+path.Base(p)+"."+hex.EncodeToString(suffix[:])+".fleetform-tmp")
	f, err := root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644) //nolint:gosec // control-plane files are not secret
	if err != nil {
		return "", err
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = root.Remove(tmp)
		return "", err
	}
	return tmp, nil
}

// removeFile removes p inside root (absent is fine) and the folders that leaves empty.
func removeFile(root *os.Root, p string) error {
	if err := root.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	removeEmptyFolders(root, path.Dir(p))
	return nil
}

// removeEmptyFolders removes folder d inside root and the folders above it, up to the first
// that is not empty.
func removeEmptyFolders(root *os.Root, d string) {
	for ; d != "." && d != "/"; d = path.Dir(d) {
		if root.Remove(d) != nil {
			return // not empty
		}
	}
}

// open loads the control plane as it is (withChanges false) or with the changes.
func (ws *workspace) open(ctx context.Context, withChanges bool) (*controlplane.ControlPlane, func(), error) {
	if ws.g == nil {
		dir, cleanup, err := ws.copyDir(withChanges)
		if err != nil {
			return nil, nil, err
		}
		opts := ws.popts
		opts.Layout = controlplane.LayoutFolder
		cp, err := controlplane.Open(ctx, dir, opts)
		if err != nil {
			cleanup()
			return nil, nil, err
		}
		return cp, cleanup, nil
	}
	g, ov, err := newOverlay(ws.g)
	if err != nil {
		return nil, nil, err
	}
	if withChanges {
		for branch, files := range ws.byBranch() {
			if _, err := ws.tree(branch); err != nil {
				return nil, nil, err
			}
			c, err := commitFiles(ov, ws.tips[branch], files, "fleetform authoring (not written)", object.Signature{Name: "fleetform"})
			if err != nil {
				return nil, nil, err
			}
			if err := ov.SetReference(plumbing.NewHashReference(plumbing.NewBranchReferenceName(branch), c)); err != nil {
				return nil, nil, err
			}
		}
	}
	opts := ws.popts
	opts.Layout = ws.layout
	cp, err := controlplane.OpenGit(ctx, g, ws.location, opts)
	if err != nil {
		return nil, nil, fmt.Errorf("open the edited control plane: %w", err)
	}
	return cp, func() {}, nil
}

// byBranch groups the changes by branch.
func (ws *workspace) byBranch() map[string]map[string][]byte {
	out := map[string]map[string][]byte{}
	for k, c := range ws.changes {
		if out[k.branch] == nil {
			out[k.branch] = map[string][]byte{}
		}
		out[k.branch][k.path] = c
	}
	return out
}
