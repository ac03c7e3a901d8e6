package authoring

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/fleetform/fleetform/internal/controlplane"
	"github.com/fleetform/fleetform/internal/gitops/gitrepo"
	"github.com/fleetform/fleetform/internal/repourl"
)

// fileKey names a file of the control plane: its branch (empty for a directory) and path.
type fileKey struct{ branch, path string }

func (k fileKey) String() string {
	if k.branch == "" {
		return k.path
	}
	return k.branch + ":" + k.path
}

// workspace is the control plane being edited: a directory (or the work tree of a git
// repository in the folder layout), or the branches of a git repository, with the
// changes made so far in memory.
type workspace struct {
	location string
	remote   string        // a remote control plane's URL ("": local)
	mirror   *gitrepo.Repo // a remote control plane's mirror, at location
	popts    controlplane.Options
	layout   controlplane.Layout
	dir      string          // directory mode: the files are read from and written to dir
	g        *git.Repository // git mode
	workTree string          // git mode: the work tree ("" for a bare repository)
	head     string          // git mode: the branch checked out in workTree
	tip      string          // the folder layout's tip branch (git mode)
	main     string          // the Kalypso layout's main branch
	tips     map[string]plumbing.Hash
	envs     []controlplane.EnvironmentInfo
	changes  map[fileKey][]byte // nil content: removed
}

// ErrNotLocal means the control plane is a remote URL and there is no cache directory to
// keep its mirror in.
var ErrNotLocal = errors.New("a remote control plane is changed on a mirror, and no cache directory was given")

// openWorkspace opens the control plane of req. gitMode is true when the change is to be
// committed (or pushed): a folder-layout work tree is then edited through its branch. A
// remote control plane is mirrored into req.CacheDir first, at the remote's tips.
func openWorkspace(ctx context.Context, req Request, gitMode bool) (*workspace, *controlplane.ControlPlane, error) {
	location, popts := req.ControlPlane, req.Platform
	p, ok := repourl.LocalPath(location)
	var mirror *gitrepo.Repo
	if !ok {
		m, err := openMirror(ctx, req)
		if err != nil {
			return nil, nil, err
		}
		p, mirror = m.GitDir(), m
	}
	if p == "" {
		p = "."
	}
	cp, err := controlplane.Open(ctx, p, popts)
	if err != nil {
		return nil, nil, err
	}
	ws := &workspace{location: p, popts: popts, layout: cp.Layout(), tips: map[string]plumbing.Hash{}, changes: map[fileKey][]byte{}}
	if mirror != nil {
		ws.remote, ws.mirror = location, mirror
	}
	ws.envs, _, err = cp.Environments(ctx)
	if err != nil {
		return nil, nil, err
	}
	if !cp.Repo().IsGit() {
		ws.dir = p
		return ws, cp, nil
	}
	ws.g = cp.Repo().Git()
	if wt, err := ws.g.Worktree(); err == nil {
		ws.workTree = wt.Filesystem.Root()
	}
	if h, err := ws.g.Storer.Reference(plumbing.HEAD); err == nil && h.Type() == plumbing.SymbolicReference {
		ws.head = h.Target().Short()
	}
	if ws.layout == controlplane.LayoutFolder && ws.workTree != "" && !gitMode {
		// Edited in place, as files; read as a directory too.
		ws.dir, ws.g = ws.workTree, nil
		return ws, cp, nil
	}
	ws.main = cp.MainBranch()
	ws.tip = popts.Ref
	if ws.tip == "" {
		ws.tip = ws.head
	}
	if ws.layout == controlplane.LayoutFolder && (ws.tip == "" || !cp.Repo().HasBranch(ws.tip)) {
		return nil, nil, fmt.Errorf("%s: the folder layout's tip is not a branch: pass --ref BRANCH", location)
	}
	return ws, cp, nil
}

// commonBranch is the branch of the common content ("" in directory mode).
func (ws *workspace) commonBranch() string {
	switch {
	case ws.g == nil:
		return ""
	case ws.layout == controlplane.LayoutKalypso:
		return ws.main
	}
	return ws.tip
}

// envInfo returns the declared environment env.
func (ws *workspace) envInfo(env string) (controlplane.EnvironmentInfo, error) {
	names := make([]string, 0, len(ws.envs))
	for _, e := range ws.envs {
		if e.Name == env {
			return e, nil
		}
		names = append(names, e.Name)
	}
	if env == "" {
		return controlplane.EnvironmentInfo{}, fmt.Errorf("--env is required: the control plane declares %s", strings.Join(names, ", "))
	}
	return controlplane.EnvironmentInfo{}, fmt.Errorf("environment %q is not declared; declared: %s", env, strings.Join(names, ", "))
}

// envRoot is where environment env's own content is: its branch and folder.
func (ws *workspace) envRoot(env string) (branch, dir string) {
	if ws.layout != controlplane.LayoutKalypso {
		return ws.commonBranch(), "environments/" + env + "/"
	}
	branch, dir = env, ""
	for _, e := range ws.envs {
		if e.Name == env && e.Object != nil {
			if b := e.Object.Spec.ControlPlane.Branch; b != "" {
				branch = b
			}
			if p := path.Clean(strings.TrimPrefix(e.Object.Spec.ControlPlane.Path, "./")); p != "." && p != "" {
				dir = p + "/"
			}
		}
	}
	return branch, dir
}

// tree returns the tree at the tip of branch, remembering the tip; nil when the branch
// does not exist.
func (ws *workspace) tree(branch string) (*object.Tree, error) {
	h, ok := ws.tips[branch]
	if !ok {
		ref, err := ws.g.Reference(plumbing.NewBranchReferenceName(branch), true)
		if errors.Is(err, plumbing.ErrReferenceNotFound) {
			ws.tips[branch] = plumbing.ZeroHash
			return nil, nil
		} else if err != nil {
			return nil, err
		}
		h = ref.Hash()
		ws.tips[branch] = h
	}
	if h.IsZero() {
		return nil, nil
	}
	c, err := ws.g.CommitObject(h)
	if errors.Is(err, plumbing.ErrObjectNotFound) {
		// Written since the repository was opened (in a pack it has not listed): the branch
		// moved under the change, which is made again.
		return nil, &movedError{branch: branch}
	} else if err != nil {
		return nil, err
	}
	return c.Tree()
}

// read returns a file's content with the changes made so far; ok is false when absent.
func (ws *workspace) read(k fileKey) (data []byte, ok bool, err error) {
	if c, changed := ws.changes[k]; changed {
		return c, c != nil, nil
	}
	if ws.g == nil {
		data, err = os.ReadFile(filepath.Join(ws.dir, filepath.FromSlash(k.path)))
		if errors.Is(err, fs.ErrNotExist) {
			return nil, false, nil
		}
		return data, err == nil, err
	}
	t, err := ws.tree(k.branch)
	if err != nil || t == nil {
		return nil, false, err
	}
	f, err := t.File(k.path)
	if errors.Is(err, object.ErrFileNotFound) {
		return nil, false, nil
	} else if err != nil {
		return nil, false, err
	}
	s, err := f.Contents()
	return []byte(s), err == nil, err
}

// write records a file's new content (nil removes it).
func (ws *workspace) write(k fileKey, data []byte) { ws.changes[k] = data }

// list returns the YAML files of branch under dir (with the changes), sorted, leaving out
// the folders in exclude: read, those the loader reads when it reads the section rooted at
// dir, and left, those Flux's default exclusions or a .sourceignore of the branch leave out
// (never read, so never edited). rootExempt is the loader's for that section: a pattern
// excluding dir itself is not applied (the environments' declarations).
func (ws *workspace) list(branch, dir string, rootExempt bool, exclude ...string) (read, left []string, err error) {
	all, delivered, err := ws.delivered(branch, dir, rootExempt)
	if err != nil {
		return nil, nil, err
	}
	for _, f := range all {
		switch {
		case !strings.HasPrefix(f, dir) || !isYAML(f) || hasAnyPrefix(f, exclude):
		case delivered(f):
			read = append(read, f)
		default:
			left = append(left, f)
		}
	}
	return read, left, nil
}

// delivered returns every file of branch (with the changes), sorted, and whether the loader
// reads a file of branch (present or not) when it reads the section rooted at dir, as
// controlplane.DeliveredFilter says.
func (ws *workspace) delivered(branch, dir string, rootExempt bool) (all []string, delivered func(file string) bool, err error) {
	if all, err = ws.listAll(branch, ""); err != nil {
		return nil, nil, err
	}
	delivered, err = controlplane.DeliveredFilter(branchTree{ws: ws, branch: branch, files: all}, dir, rootExempt)
	return all, delivered, err
}

// branchTree is a branch of the workspace (its directory in directory mode) with the changes
// made so far, as the loader's Tree: what .sourceignore says is read from it.
type branchTree struct {
	ws     *workspace
	branch string
	files  []string // every file of the branch, sorted
}

// Files lists every file of the branch, sorted.
func (t branchTree) Files() ([]string, error) { return t.files, nil }

// ReadFile returns a file's content, with the changes.
func (t branchTree) ReadFile(name string) ([]byte, error) {
	k := fileKey{t.branch, name}
	data, ok, err := t.ws.read(k)
	switch {
	case err != nil:
		return nil, fmt.Errorf("%s: %w", k, err)
	case !ok:
		return nil, fmt.Errorf("%s: %w", k, fs.ErrNotExist)
	}
	return data, nil
}

// Revision is "": the tree has changes no commit holds.
func (t branchTree) Revision() string { return "" }

// files returns the files of branch under dir, with the changes: present ones true.
func (ws *workspace) files(branch, dir string) (map[string]bool, error) {
	seen := map[string]bool{}
	if ws.g == nil {
		root := filepath.Join(ws.dir, filepath.FromSlash(dir))
		err := filepath.WalkDir(root, func(p string, e fs.DirEntry, err error) error {
			if err != nil {
				if errors.Is(err, fs.ErrNotExist) {
					return nil
				}
				return err
			}
			if e.IsDir() && e.Name() == ".git" {
				return filepath.SkipDir
			}
			if e.Type().IsRegular() {
				rel, err := filepath.Rel(ws.dir, p)
				if err != nil {
					return err
				}
				seen[filepath.ToSlash(rel)] = true
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	} else {
		t, err := ws.tree(branch)
		if err != nil {
			return nil, err
		}
		if t != nil {
			err = t.Files().ForEach(func(f *object.File) error {
				if f.Mode != filemode.Symlink && strings.HasPrefix(f.Name, dir) {
					seen[f.Name] = true
				}
				return nil
			})
			if err != nil {
				return nil, err
			}
		}
	}
	for k, c := range ws.changes {
		if k.branch == branch && strings.HasPrefix(k.path, dir) {
			seen[k.path] = c != nil
		}
	}
	return seen, nil
}

func isYAML(p string) bool { return strings.HasSuffix(p, ".yaml") || strings.HasSuffix(p, ".yml") }

func hasAnyPrefix(s string, prefixes []string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

// changed lists the changed files, sorted; those whose content is what was read are left out.
func (ws *workspace) changed() ([]fileKey, error) {
	var out []fileKey
	for _, k := range slices.SortedFunc(maps.Keys(ws.changes), func(a, b fileKey) int {
		return strings.Compare(a.String(), b.String())
	}) {
		now := ws.changes[k]
		old, ok, err := ws.base(k)
		if err != nil {
			return nil, err
		}
		if (now == nil && !ok) || (now != nil && ok && string(old) == string(now)) {
			continue
		}
		out = append(out, k)
	}
	return out, nil
}

// base reads a file as it was, without the changes.
func (ws *workspace) base(k fileKey) ([]byte, bool, error) {
	c, had := ws.changes[k]
	delete(ws.changes, k)
	data, ok, err := ws.read(k)
	if had {
		ws.changes[k] = c
	}
	return data, ok, err
}
