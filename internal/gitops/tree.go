package gitops

import (
	"fmt"
	"maps"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/storer"
)

// dir is a git tree, loaded from the repository only when something below it is read or
// changed, and edited in memory.
type dir struct {
	hash    plumbing.Hash // as read; zero for a new folder
	loaded  bool
	changed bool
	entries map[string]*entry
}

type entry struct {
	mode filemode.FileMode
	hash plumbing.Hash
	sub  *dir // for folders, once loaded
}

func (e *entry) isDir() bool { return e.mode == filemode.Dir }

// treeEditor edits the tree of a commit. Unchanged folders keep their object names, so
// writing it back creates objects only along the changed paths.
type treeEditor struct {
	objects storer.EncodedObjectStorer
	root    *dir
}

func newTreeEditor(objects storer.EncodedObjectStorer, root plumbing.Hash) *treeEditor {
	return &treeEditor{objects: objects, root: &dir{hash: root, loaded: root.IsZero(), entries: map[string]*entry{}}}
}

func (t *treeEditor) load(d *dir) error {
	if d.loaded {
		return nil
	}
	tr, err := object.GetTree(t.objects, d.hash)
	if err != nil {
		return fmt.Errorf("read tree %s: %w", d.hash, err)
	}
	d.entries = make(map[string]*entry, len(tr.Entries))
	for _, e := range tr.Entries {
		d.entries[e.Name] = &entry{mode: e.Mode, hash: e.Hash}
	}
	d.loaded = true
	return nil
}

func (t *treeEditor) subdir(e *entry) (*dir, error) {
	if e.sub == nil {
		e.sub = &dir{hash: e.hash}
	}
	return e.sub, t.load(e.sub)
}

// walk returns the folders from the root to the folder at p ("" is the root), creating the
// missing ones when create is set (nil, nil when one is missing and create is not).
func (t *treeEditor) walk(p string, create bool) ([]*dir, error) {
	if err := t.load(t.root); err != nil {
		return nil, err
	}
	chain := []*dir{t.root}
	if p == "" {
		return chain, nil
	}
	for _, name := range strings.Split(p, "/") {
		d := chain[len(chain)-1]
		e, ok := d.entries[name]
		if ok && !e.isDir() {
			if !create {
				return nil, nil
			}
			delete(d.entries, name) // a file where a folder must be: the folder wins
			ok = false
		}
		if !ok {
			if !create {
				return nil, nil
			}
			if err := checkNewEntry(p, name); err != nil {
				return nil, err
			}
			e = &entry{mode: filemode.Dir, sub: &dir{loaded: true, entries: map[string]*entry{}}}
			d.entries[name] = e
		}
		sub, err := t.subdir(e)
		if err != nil {
			return nil, err
		}
		chain = append(chain, sub)
	}
	return chain, nil
}

func markChanged(chain []*dir) {
	for _, d := range chain {
		d.changed = true
	}
}

// fileAction is what setFile did.
type fileAction string

// File actions, as `plan` reports them.
const (
	actionAdd    fileAction = "add"
	actionModify fileAction = "modify"
	actionDelete fileAction = "delete"
	actionNone   fileAction = ""
)

// setFile points the file at p to blob, returning what changed (the previous blob too).
func (t *treeEditor) setFile(p string, blob plumbing.Hash) (fileAction, plumbing.Hash, error) {
	parent, name := path.Split(p)
	chain, err := t.walk(strings.TrimSuffix(parent, "/"), true)
	if err != nil {
		return actionNone, plumbing.ZeroHash, err
	}
	d := chain[len(chain)-1]
	old, ok := d.entries[name]
	switch {
	case ok && !old.isDir() && old.hash == blob:
		return actionNone, old.hash, nil
	case ok && old.isDir():
		return actionNone, plumbing.ZeroHash, fmt.Errorf("%s is a folder, not a file", p)
	case !ok:
		if err := checkNewEntry(p, name); err != nil {
			return actionNone, plumbing.ZeroHash, err
		}
	}
	d.entries[name] = &entry{mode: filemode.Regular, hash: blob}
	markChanged(chain)
	if ok {
		return actionModify, old.hash, nil
	}
	return actionAdd, plumbing.ZeroHash, nil
}

// file returns the blob of the file at p, if there is one.
func (t *treeEditor) file(p string) (plumbing.Hash, bool, error) {
	parent, name := path.Split(p)
	chain, err := t.walk(strings.TrimSuffix(parent, "/"), false)
	if err != nil || chain == nil {
		return plumbing.ZeroHash, false, err
	}
	e, ok := chain[len(chain)-1].entries[name]
	if !ok || e.isDir() {
		return plumbing.ZeroHash, false, nil
	}
	return e.hash, true, nil
}

// list returns the names in the folder at p (files and folders), sorted; nil when absent.
func (t *treeEditor) list(p string) (files, dirs []string, err error) {
	chain, err := t.walk(p, false)
	if err != nil || chain == nil {
		return nil, nil, err
	}
	d := chain[len(chain)-1]
	for _, name := range slices.Sorted(maps.Keys(d.entries)) {
		if d.entries[name].isDir() {
			dirs = append(dirs, name)
		} else {
			files = append(files, name)
		}
	}
	return files, dirs, nil
}

// dirHash returns the object name of the folder at p as read (zero when absent or new).
func (t *treeEditor) dirHash(p string) (plumbing.Hash, error) {
	parent, name := path.Split(p)
	chain, err := t.walk(strings.TrimSuffix(parent, "/"), false)
	if err != nil || chain == nil {
		return plumbing.ZeroHash, err
	}
	e, ok := chain[len(chain)-1].entries[name]
	if !ok || !e.isDir() {
		return plumbing.ZeroHash, nil
	}
	return e.hash, nil
}

// remove deletes the file or folder at p and returns the removed files with their blobs.
func (t *treeEditor) remove(p string) (map[string]plumbing.Hash, error) {
	parent, name := path.Split(p)
	chain, err := t.walk(strings.TrimSuffix(parent, "/"), false)
	if err != nil || chain == nil {
		return nil, err
	}
	d := chain[len(chain)-1]
	e, ok := d.entries[name]
	if !ok {
		return nil, nil
	}
	removed := map[string]plumbing.Hash{}
	if err := t.collect(p, e, removed); err != nil {
		return nil, err
	}
	delete(d.entries, name)
	markChanged(chain)
	return removed, nil
}

// collect lists every file at or below e.
func (t *treeEditor) collect(p string, e *entry, out map[string]plumbing.Hash) error {
	if !e.isDir() {
		out[p] = e.hash
		return nil
	}
	sub, err := t.subdir(e)
	if err != nil {
		return err
	}
	for name, c := range sub.entries {
		if err := t.collect(p+"/"+name, c, out); err != nil {
			return err
		}
	}
	return nil
}

// write adds every changed folder to pk, bottom up, and returns the root's object name.
// Folders left empty are dropped, as git does.
func (t *treeEditor) write(pk *pack) plumbing.Hash {
	h, _ := t.writeDir(t.root, pk)
	return h
}

func (t *treeEditor) writeDir(d *dir, pk *pack) (plumbing.Hash, bool) {
	if !d.changed {
		return d.hash, len(d.entries) > 0 || !d.loaded
	}
	for name, e := range d.entries {
		if e.isDir() && e.sub != nil {
			h, nonEmpty := t.writeDir(e.sub, pk)
			if !nonEmpty {
				delete(d.entries, name)
				continue
			}
			e.hash = h
		}
	}
	d.hash = pk.add(plumbing.TreeObject, encodeTree(d.entries))
	d.changed = false
	return d.hash, len(d.entries) > 0
}

// encodeTree serializes entries in git's order (folders sort as if named "<name>/").
func encodeTree(entries map[string]*entry) []byte {
	names := slices.Collect(maps.Keys(entries))
	slices.SortFunc(names, func(a, b string) int {
		return strings.Compare(sortName(a, entries[a]), sortName(b, entries[b]))
	})
	out := make([]byte, 0, len(names)*40)
	for _, n := range names {
		e := entries[n]
		out = strconv.AppendUint(out, uint64(e.mode), 8)
		out = append(out, ' ')
		out = append(out, n...)
		out = append(out, 0)
		out = append(out, e.hash[:]...)
	}
	return out
}

func sortName(name string, e *entry) string {
	if e.isDir() {
		return name + "/"
	}
	return name
}

// files returns the files (name -> blob) of the folder at p; nil when absent.
func (t *treeEditor) files(p string) (map[string]plumbing.Hash, error) {
	chain, err := t.walk(p, false)
	if err != nil || chain == nil {
		return nil, err
	}
	out := map[string]plumbing.Hash{}
	for name, e := range chain[len(chain)-1].entries {
		if !e.isDir() {
			out[name] = e.hash
		}
	}
	return out, nil
}
