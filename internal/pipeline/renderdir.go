package pipeline

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
)

// outFolder is render's --out, opened as an os.Root: nothing written or removed through it
// leaves the folder, whatever its content (or a concurrent change to it) is. --out itself
// may be a symbolic link: the user chose it.
type outFolder struct {
	dir  string
	root *os.Root
	// folders are the folders of the tree's files, with their files.
	folders []*outDir
	// existing are the tree's files that exist (as regular files).
	existing map[string]bool
}

// outDir is one folder of the tree ("." is --out) and the files render writes in it.
type outDir struct {
	rel    string
	names  []string
	exists bool
}

// openOut creates --out if needed and opens it.
func openOut(dir string) (*outFolder, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil { //nolint:gosec // the rendered GitOps tree is meant to be read and committed, like the files written into it (0644)
		return nil, err
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	return &outFolder{dir: dir, root: root, existing: map[string]bool{}}, nil
}

func (o *outFolder) close() { _ = o.root.Close() }

// errSymlink is a symbolic link where render would write.
var errSymlink = errors.New("is a symbolic link: render does not write through symbolic links inside --out " +
	"(remove it, or render into another folder)")

// check finds, before anything is written or removed, every symbolic link inside --out
// where render would write a file or that is a folder on the way to one, and every file
// where a folder must be (or folder where a file must be). It prints each to w, one line
// each, and then fails. It records which folders and files exist.
//
// Folders are listed by their path: a listing only informs, and everything written or
// removed goes through the root.
func (o *outFolder) check(w io.Writer, tree map[string][]byte) error {
	byDir := map[string]*outDir{}
	for p := range tree {
		d := path.Dir(p)
		if byDir[d] == nil {
			byDir[d] = &outDir{rel: d}
		}
		byDir[d].names = append(byDir[d].names, path.Base(p))
	}
	c := &checker{o: o, kinds: map[string]entryKind{".": isOK}, listings: map[string]map[string]fs.FileMode{}}
	for _, d := range slices.Sorted(maps.Keys(byDir)) {
		od := byDir[d]
		slices.Sort(od.names)
		o.folders = append(o.folders, od)
		kind, err := c.folderKind(d)
		if err != nil {
			return err
		}
		if kind != isOK {
			continue
		}
		od.exists = true
		types, err := listFolder(o.show(d))
		if err != nil {
			return err
		}
		for _, name := range od.names {
			rel := path.Join(d, name)
			if typ, ok := types[name]; ok && c.problem(rel, typ, false) == isOK {
				o.existing[rel] = true
			}
		}
	}
	if len(c.problems) == 0 {
		return nil
	}
	for _, p := range c.problems {
		fmt.Fprintln(w, "error:", p)
	}
	return fmt.Errorf("nothing written into %s: in the way: %s", o.dir, strings.Join(c.paths, ", "))
}

// checker is one check of --out.
type checker struct {
	o        *outFolder
	kinds    map[string]entryKind              // folder -> what is there
	listings map[string]map[string]fs.FileMode // folder -> its entries' types
	problems []error
	paths    []string // where the problems are
}

// entryKind is what is at a path inside --out.
type entryKind int

const (
	isAbsent  entryKind = iota // render creates it
	isOK                       // what render needs there: a folder, or a regular file
	isBlocked                  // a symbolic link, or a file where a folder must be (or the reverse)
)

// folderKind returns what is at folder d, parents first, each once: a link or a file on
// the way is reported once, where it is, and the folders below it are not looked at.
func (c *checker) folderKind(d string) (entryKind, error) {
	if kind, ok := c.kinds[d]; ok {
		return kind, nil
	}
	parent, err := c.folderKind(path.Dir(d))
	if err != nil || parent != isOK {
		c.kinds[d] = parent // below a folder render creates, or below a problem reported there
		return parent, err
	}
	types, ok := c.listings[path.Dir(d)]
	if !ok {
		if types, err = listFolder(c.o.show(path.Dir(d))); err != nil {
			return 0, err
		}
		c.listings[path.Dir(d)] = types
	}
	c.kinds[d] = isAbsent
	if typ, ok := types[path.Base(d)]; ok {
		c.kinds[d] = c.problem(d, typ, true)
	}
	return c.kinds[d], nil
}

// problem records what is wrong with an entry of type typ at rel, where render needs a
// folder (dir) or a regular file, and returns isOK when nothing is.
func (c *checker) problem(rel string, typ fs.FileMode, dir bool) entryKind {
	switch {
	case typ&fs.ModeSymlink != 0:
		c.problems = append(c.problems, fmt.Errorf("%s %w", c.o.show(rel), errSymlink))
	case dir && !typ.IsDir():
		c.problems = append(c.problems, fmt.Errorf("%s is not a folder", c.o.show(rel)))
	case !dir && !typ.IsRegular():
		c.problems = append(c.problems, fmt.Errorf("%s is not a regular file", c.o.show(rel)))
	default:
		return isOK
	}
	c.paths = append(c.paths, c.o.show(rel))
	return isBlocked
}

// listFolder returns the type of every entry of a folder.
func listFolder(dir string) (map[string]fs.FileMode, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	types := make(map[string]fs.FileMode, len(entries))
	for _, e := range entries {
		types[e.Name()] = e.Type()
	}
	return types, nil
}

// show names a path inside --out for messages.
func (o *outFolder) show(rel string) string { return filepath.Join(o.dir, filepath.FromSlash(rel)) }

// writeWorkers is how many folders are written at once: creating files is mostly kernel
// time, which a few writers overlap.
const writeWorkers = 4

// write writes every file whose content differs (after check), and returns the written
// paths. Folders are created once; files that did not exist are written without reading
// first.
func (o *outFolder) write(tree map[string][]byte) (written []string, unchanged int, err error) {
	wrote := make([][]bool, len(o.folders))
	errs := make(chan error, writeWorkers)
	var next atomic.Int64
	var wg sync.WaitGroup
	for range writeWorkers {
		wg.Go(func() {
			for i := int(next.Add(1)) - 1; i < len(o.folders); i = int(next.Add(1)) - 1 {
				var err error
				if wrote[i], err = o.writeDir(o.folders[i], tree); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return nil, 0, err
	}
	written = []string{}
	for i, od := range o.folders {
		for j, name := range od.names {
			if wrote[i][j] {
				written = append(written, path.Join(od.rel, name))
			} else {
				unchanged++
			}
		}
	}
	sort.Strings(written)
	return written, unchanged, nil
}

// writeDir writes the files of one folder, through a root opened on that folder.
func (o *outFolder) writeDir(od *outDir, tree map[string][]byte) ([]bool, error) {
	if !od.exists {
		if err := o.root.MkdirAll(od.rel, 0o755); err != nil {
			return nil, err
		}
	}
	dir, err := o.root.OpenRoot(od.rel)
	if errors.Is(err, fs.ErrNotExist) { // left empty by removeStale, and removed
		if err = o.root.MkdirAll(od.rel, 0o755); err == nil {
			dir, err = o.root.OpenRoot(od.rel)
		}
	}
	if err != nil {
		return nil, err
	}
	defer func() { _ = dir.Close() }()
	wrote := make([]bool, len(od.names))
	for j, name := range od.names {
		rel := path.Join(od.rel, name)
		content := tree[rel]
		if o.existing[rel] {
			if old, err := dir.ReadFile(name); err == nil && bytes.Equal(old, content) {
				continue
			}
		}
		if err := dir.WriteFile(name, content, 0o644); err != nil {
			return nil, err
		}
		wrote[j] = true
	}
	return wrote, nil
}

// removeStale removes files inside the rendered cluster-type folders that are not in the
// tree, except under the folders in keep and, when current is not nil, under folders of
// targets that are not in current. A symbolic link is removed as a link: what it points to
// is never looked at. Folders are listed by their path, and every removal goes through
// the root.
func (o *outFolder) removeStale(clusterTypes []string, tree map[string][]byte, keep, current map[string]bool) ([]string, error) {
	removed := []string{}
	for _, ct := range clusterTypes {
		root := o.show(ct)
		if fi, err := os.Lstat(root); err != nil || !fi.IsDir() {
			continue // absent (a link or a file here was refused by check)
		}
		err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			rel := o.rel(p)
			if _, ok := tree[rel]; ok || keptBy(rel, keep) || (current != nil && targetDir(rel) != "" && !current[targetDir(rel)]) {
				return nil
			}
			removed = append(removed, rel)
			return o.root.Remove(rel)
		})
		if err != nil {
			return nil, err
		}
		o.removeEmptyDirs(root)
	}
	sort.Strings(removed)
	return removed, nil
}

// rel returns the slash-separated path inside --out of p, a path under o.dir.
func (o *outFolder) rel(p string) string {
	rel, _ := filepath.Rel(o.dir, p)
	return filepath.ToSlash(rel)
}

// removeEmptyDirs removes the empty folders under root (a folder of --out), deepest first.
func (o *outFolder) removeEmptyDirs(root string) {
	var dirs []string
	_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			dirs = append(dirs, o.rel(p))
		}
		return nil
	})
	for i := len(dirs) - 1; i >= 0; i-- {
		_ = o.root.Remove(dirs[i]) // fails, harmlessly, when not empty
	}
}

// targetDir returns the <clusterType>/<deploymentTarget>/ folder of a path, or "".
func targetDir(p string) string {
	parts := strings.SplitN(p, "/", 3)
	if len(parts) < 3 {
		return ""
	}
	return parts[0] + "/" + parts[1] + "/"
}

// keptBy reports whether p is inside one of the <clusterType>/<deploymentTarget>/ folders
// in keep.
func keptBy(p string, keep map[string]bool) bool {
	d := targetDir(p)
	return d != "" && keep[d]
}

// DirResult is what RenderToDir did.
type DirResult struct {
	// Written are the files written (new or changed), Unchanged how many were already so.
	Written   []string
	Unchanged int
	// Removed are the files of assignments no longer rendered that were removed.
	Removed []string
}

// RenderToDir writes a rendered run into dir, which stands for the GitOps path: the files
// it renders are written, the files it no longer renders inside the cluster-type folders it
// renders are removed, but those of failed assignments are kept, and with errors in the
// input the folders of targets no longer scheduled too. Anything else in dir is left alone.
// Symbolic links in the way are refused before anything is written (each is printed to
// problems).
func RenderToDir(r *Run, dir string, problems io.Writer) (DirResult, error) {
	var res DirResult
	keep := map[string]bool{}
	for _, a := range r.Output.Failed() {
		keep[a.Dir()+"/"] = true
	}
	var current map[string]bool
	if r.HasInputErrors() {
		current = map[string]bool{}
		for i := range r.Output.Assignments {
			current[r.Output.Assignments[i].Dir()+"/"] = true
		}
	}
	tree := r.Output.Tree()
	out, err := openOut(dir)
	if err != nil {
		return res, err
	}
	defer out.close()
	if err := out.check(problems, tree); err != nil {
		return res, err
	}
	if res.Removed, err = out.removeStale(r.Output.ClusterTypes, tree, keep, current); err != nil {
		return res, err
	}
	res.Written, res.Unchanged, err = out.write(tree)
	return res, err
}
