package authoring

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

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

// applyToDir writes the changes into dir, removing the folders a removal leaves empty.
func applyToDir(dir string, changes map[fileKey][]byte) error {
	for k, c := range changes {
		p := filepath.Join(dir, filepath.FromSlash(k.path))
		if c != nil {
			if err := writeFile(p, c); err != nil {
				return err
			}
			continue
		}
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		for d := filepath.Dir(p); d != filepath.Clean(dir) && len(d) > len(filepath.Clean(dir)); d = filepath.Dir(d) {
			if os.Remove(d) != nil {
				break // not empty
			}
		}
	}
	return nil
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
