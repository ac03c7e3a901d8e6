package gitrepo

import (
	"fmt"
	"maps"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/storer"

	"github.com/fleetform/fleetform/internal/controlplane"
)

// dir is a git tree, loaded from the repository only when something below it is read or
// changed, and edited in memory.
type dir struct {
	hash    plumbing.Hash // as read; zero for a new folder
	loaded  bool
	changed bool
	entries map[string]*entry
	// order is the entries' names in git's order as last read or written (nil: unknown),
	// and added the names added since: a folder of tens of thousands of entries with one
	// changed is written again without sorting them all.
	order []treeName
	added []string
}

// treeName is an entry's name in a tree, and whether it is a folder (which sorts as if its
// name ended with "/").
type treeName struct {
	name string
	dir  bool
}

type entry struct {
	mode filemode.FileMode
	hash plumbing.Hash
	sub  *dir // for folders, once loaded
}

func (e *entry) isDir() bool { return e.mode == filemode.Dir }

// Tree is the tree of a commit, read lazily and edited in memory: a folder is read from the
// repository only when something below it is read or changed. Unchanged folders keep their
// object names, so writing it back creates objects only along the changed paths. The blobs
// and folders it adds are collected into one pack, written into the repository by Commit.
// Paths are slash-separated and relative to the root ("" is the root). A Tree is not safe
// for concurrent use.
type Tree struct {
	repo    *Repo
	objects *objectReader
	root    *dir
	pack    *pack
	// ahead holds the folders read ahead (ReadAhead) by object name, until a walk takes them.
	aheadMu sync.Mutex
	ahead   map[plumbing.Hash]*aheadDir
}

// aheadDir is a folder's tree being read, or read, ahead of the walk that needs it.
type aheadDir struct {
	entries map[string]*entry
	order   []treeName
	err     error
	done    chan struct{} // closed once read
}

// Edit opens the tree of commit tip (zero: an empty tree) for reading and editing. It
// reads the packs there are now (and objects written since, through go-git). Discard
// closes what it reads from.
func (r *Repo) Edit(tip plumbing.Hash) (*Tree, error) {
	objects, err := openObjectReader(filepath.Join(r.gitDir, "objects"), func() (storer.EncodedObjectStorer, error) {
		g, err := r.open()
		if err != nil {
			return nil, err
		}
		return g.Storer, nil
	})
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", r.location, err)
	}
	root := plumbing.ZeroHash
	if !tip.IsZero() {
		if root, err = objects.commitTree(tip); err != nil {
			objects.Close()
			return nil, fmt.Errorf("read commit %s in %s: %w", tip, r.location, err)
		}
	}
	return newTree(r, objects, root), nil
}

func newTree(repo *Repo, objects *objectReader, root plumbing.Hash) *Tree {
	return &Tree{repo: repo, objects: objects, pack: newPack(filepath.Join(repo.gitDir, "objects"), repo.logger),
		root: &dir{hash: root, loaded: root.IsZero(), entries: map[string]*entry{}}}
}

// PlanOnly makes the tree name the objects it would write without keeping them: it is
// edited to plan a change, and never committed. Call it before any change.
func (t *Tree) PlanOnly() { t.pack.dry = true }

// Reserve makes room for about n new objects (files and folders) in what the tree
// collects for its commit, so that recording them does not grow its tables on the way.
func (t *Tree) Reserve(n int) { t.pack.reserve(n) }

// Discard drops the objects collected for a commit that will not be made, and the
// temporary pack they were streamed into, and closes the files the tree reads: it must
// not be used afterwards. After Commit it only closes them.
func (t *Tree) Discard() {
	t.pack.discard()
	t.objects.Close()
}

func (t *Tree) load(d *dir) error {
	if d.loaded {
		return nil
	}
	var entries map[string]*entry
	var order []treeName
	var err error
	if a := t.takeAhead(d.hash); a != nil {
		entries, order, err = a.entries, a.order, a.err
	} else {
		entries, order, err = t.objects.tree(d.hash)
	}
	if err != nil {
		return fmt.Errorf("read tree %s: %w", d.hash, err)
	}
	d.entries, d.order = entries, order
	d.loaded = true
	return nil
}

// ReadAhead reads and parses the tree h of a folder (a DirHash) on the calling goroutine,
// so that the walk that needs the folder later takes it instead of reading it then. Unlike
// the rest of a Tree, it may be called from any goroutine while the tree is being edited.
// A folder read ahead and never walked is dropped with the tree; one read ahead twice is
// read once.
func (t *Tree) ReadAhead(h plumbing.Hash) {
	if h.IsZero() {
		return
	}
	t.aheadMu.Lock()
	if _, ok := t.ahead[h]; ok {
		t.aheadMu.Unlock()
		return
	}
	if t.ahead == nil {
		t.ahead = map[plumbing.Hash]*aheadDir{}
	}
	a := &aheadDir{done: make(chan struct{})}
	t.ahead[h] = a
	t.aheadMu.Unlock()
	a.entries, a.order, a.err = t.objects.tree(h)
	close(a.done)
}

// takeAhead returns the folder tree h read ahead, waiting for it if it is being read, or
// nil when it was not. It is taken once: another folder with the same tree reads its own.
func (t *Tree) takeAhead(h plumbing.Hash) *aheadDir {
	t.aheadMu.Lock()
	a := t.ahead[h]
	delete(t.ahead, h)
	t.aheadMu.Unlock()
	if a != nil {
		<-a.done
	}
	return a
}

func (t *Tree) subdir(e *entry) (*dir, error) {
	if e.sub == nil {
		e.sub = &dir{hash: e.hash}
	}
	return e.sub, t.load(e.sub)
}

// walk returns the folders from the root to the folder at p ("" is the root), creating the
// missing ones when create is set (nil, nil when one is missing and create is not).
func (t *Tree) walk(p string, create bool) ([]*dir, error) {
	if err := t.load(t.root); err != nil {
		return nil, err
	}
	if p == "" {
		return []*dir{t.root}, nil
	}
	chain := make([]*dir, 1, strings.Count(p, "/")+2)
	chain[0] = t.root
	for rest, more := p, true; more; {
		var name string
		name, rest, more = strings.Cut(rest, "/")
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
			d.added = append(d.added, name)
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

// Action is what SetFile did to a file. Its values are the actions `plan` reports.
type Action string

// What SetFile did.
const (
	Unchanged Action = ""       // the file already had that content
	Added     Action = "add"    // the file is new
	Modified  Action = "modify" // the file had another content
)

// SetFile gives the file at p the content, creating the folders on its way (a file in the
// way is replaced by the folder), and returns what changed and the previous blob. A new blob is
// added to the tree's pack; content must not change afterwards. It refuses a name git
// would refuse (a .git folder in any form, "", "." or "..").
func (t *Tree) SetFile(p string, content []byte) (Action, plumbing.Hash, error) {
	blob := t.pack.name(plumbing.BlobObject, content)
	action, old, err := t.setFile(p, blob)
	if err == nil && action != Unchanged {
		t.pack.addNamed(plumbing.BlobObject, content, blob)
	}
	return action, old, err
}

// File is a file SetFiles writes: its name in the folder, and its content.
type File struct {
	Name    string
	Content []byte
}

// FileChange is what SetFiles did to a file: what changed, and the previous blob.
type FileChange struct {
	Action Action
	Old    plumbing.Hash
}

// SetFiles is SetFile for files of one folder (dir; "" is the root), which it walks to
// once: a deployment target's files are written together. changes (as long as files) get
// what SetFile would return for each file. It stops at the first error.
func (t *Tree) SetFiles(dir string, files []File, changes []FileChange) error {
	chain, err := t.walk(dir, true)
	if err != nil {
		return err
	}
	changed := false
	defer func() {
		if changed {
			markChanged(chain)
		}
	}()
	for i, f := range files {
		blob := t.pack.name(plumbing.BlobObject, f.Content)
		action, old, err := setEntry(chain[len(chain)-1], dir, f.Name, blob)
		if err != nil {
			return err
		}
		changes[i] = FileChange{Action: action, Old: old}
		if action != Unchanged {
			changed = true
			t.pack.addLike(plumbing.BlobObject, f.Content, blob, f.Name)
		}
	}
	return nil
}

// setFile points the file at p to blob, returning what changed (the previous blob too).
func (t *Tree) setFile(p string, blob plumbing.Hash) (Action, plumbing.Hash, error) {
	parent, name := path.Split(p)
	parent = strings.TrimSuffix(parent, "/")
	chain, err := t.walk(parent, true)
	if err != nil {
		return Unchanged, plumbing.ZeroHash, err
	}
	action, old, err := setEntry(chain[len(chain)-1], parent, name, blob)
	if action != Unchanged {
		markChanged(chain)
	}
	return action, old, err
}

// setEntry points the file name of the folder d (at dir) to blob, returning what changed
// (the previous blob too).
func setEntry(d *dir, dir, name string, blob plumbing.Hash) (Action, plumbing.Hash, error) {
	old, ok := d.entries[name]
	switch {
	case ok && !old.isDir() && old.hash == blob:
		return Unchanged, old.hash, nil
	case ok && old.isDir():
		return Unchanged, plumbing.ZeroHash, fmt.Errorf("%s is a folder, not a file", path.Join(dir, name))
	case !ok:
		if err := controlplane.CheckTreeName(name); err != nil { // the path is made only then
			return Unchanged, plumbing.ZeroHash, fmt.Errorf("refusing to write %q: %w", path.Join(dir, name), err)
		}
	}
	d.entries[name] = &entry{mode: filemode.Regular, hash: blob}
	if !ok {
		d.added = append(d.added, name)
	}
	if ok {
		return Modified, old.hash, nil
	}
	return Added, plumbing.ZeroHash, nil
}

// parentOf walks to the folder holding p without creating anything: the chain of folders
// from the root to it (nil when absent) and p's name in it.
func (t *Tree) parentOf(p string) (chain []*dir, name string, err error) {
	parent, name := path.Split(p)
	chain, err = t.walk(strings.TrimSuffix(parent, "/"), false)
	return chain, name, err
}

// File returns the blob of the file at p, if there is one.
func (t *Tree) File(p string) (plumbing.Hash, bool, error) {
	chain, name, err := t.parentOf(p)
	if err != nil || chain == nil {
		return plumbing.ZeroHash, false, err
	}
	e, ok := chain[len(chain)-1].entries[name]
	if !ok || e.isDir() {
		return plumbing.ZeroHash, false, nil
	}
	return e.hash, true, nil
}

// List returns the names in the folder at p (files and folders), sorted; nil when absent.
func (t *Tree) List(p string) (files, dirs []string, err error) {
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

// DirHash returns the object name of the folder at p as read (zero when absent or new).
func (t *Tree) DirHash(p string) (plumbing.Hash, error) {
	chain, name, err := t.parentOf(p)
	if err != nil || chain == nil {
		return plumbing.ZeroHash, err
	}
	e, ok := chain[len(chain)-1].entries[name]
	if !ok || !e.isDir() {
		return plumbing.ZeroHash, nil
	}
	return e.hash, nil
}

// Remove deletes the file or folder at p and returns the removed files with their blobs
// (none when p is absent).
func (t *Tree) Remove(p string) (map[string]plumbing.Hash, error) {
	chain, name, err := t.parentOf(p)
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
func (t *Tree) collect(p string, e *entry, out map[string]plumbing.Hash) error {
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

// WriteDir adds every changed folder at or below the folder at p to the tree's pack,
// bottom up, and returns the folder's object name (zero when p is absent). Folders left
// empty are dropped, as git does.
func (t *Tree) WriteDir(p string) (plumbing.Hash, error) {
	chain, err := t.walk(p, false)
	if err != nil || chain == nil {
		return plumbing.ZeroHash, err
	}
	h, _ := t.writeDir(chain[len(chain)-1])
	return h, nil
}

// Release drops the folder at p, written by WriteDir and unchanged since, from memory: only
// its object name stays. Reading or changing anything below p afterwards reads it from the
// repository, where it is only once committed: release a folder only when done with it.
// A million-assignment tree would otherwise hold every folder it wrote until the commit.
func (t *Tree) Release(p string) {
	chain, name, err := t.parentOf(p)
	if err != nil || chain == nil {
		return
	}
	d := chain[len(chain)-1]
	e, ok := d.entries[name]
	if !ok || !e.isDir() || e.sub == nil || e.sub.changed {
		return
	}
	if e.sub.loaded && len(e.sub.entries) == 0 {
		delete(d.entries, name) // left empty: dropped, as writeDir would
		return
	}
	e.hash, e.sub = e.sub.hash, nil
}

// Forget drops the folder at p from memory in a tree that only plans (PlanOnly), edited or
// not: the folder reads again as the repository has it. A plan that has recorded what it
// changed below p does not need it any more, and a plan of a change to every cluster type
// of a million-assignment fleet would otherwise hold all of their folders. In a tree that
// will be committed, it does nothing.
func (t *Tree) Forget(p string) {
	if !t.pack.dry {
		return
	}
	chain, name, err := t.parentOf(p)
	if err != nil || chain == nil {
		return
	}
	if e, ok := chain[len(chain)-1].entries[name]; ok && e.isDir() && e.sub != nil {
		if e.sub.hash.IsZero() {
			delete(chain[len(chain)-1].entries, name) // new in this plan: not in the repository
			return
		}
		e.hash, e.sub = e.sub.hash, nil
	}
}

// writeDir writes d and the changed folders below it, and says whether d holds anything.
func (t *Tree) writeDir(d *dir) (plumbing.Hash, bool) {
	if !d.changed {
		return d.hash, len(d.entries) > 0 || !d.loaded
	}
	for name, e := range d.entries {
		if e.isDir() && e.sub != nil {
			h, nonEmpty := t.writeDir(e.sub)
			if !nonEmpty {
				delete(d.entries, name)
				continue
			}
			e.hash = h
		}
	}
	d.hash = t.pack.add(plumbing.TreeObject, d.encode())
	d.changed = false
	return d.hash, len(d.entries) > 0
}

// encode serializes the folder's entries in git's order, and records that order.
func (d *dir) encode() []byte {
	list := d.sorted()
	size := 0
	for _, n := range list {
		size += len(n.name) + 28
	}
	out := make([]byte, 0, size)
	order := make([]treeName, len(list))
	for i, n := range list {
		out = strconv.AppendUint(out, uint64(n.e.mode), 8)
		out = append(out, ' ')
		out = append(out, n.name...)
		out = append(out, 0)
		out = append(out, n.e.hash[:]...)
		order[i] = treeName{name: n.name, dir: n.e.isDir()}
	}
	d.order, d.added = order, nil
	return out
}

// namedEntry is an entry with its name.
type namedEntry struct {
	name string
	e    *entry
}

// sorted lists the entries in git's order: those of the recorded order that are still
// there, merged with the ones added since, sorted; all of them sorted when that does not
// account for every entry.
func (d *dir) sorted() []namedEntry {
	if d.order != nil {
		if list, ok := d.merged(); ok {
			return list
		}
	}
	list := make([]namedEntry, 0, len(d.entries))
	for n, e := range d.entries {
		list = append(list, namedEntry{n, e})
	}
	slices.SortFunc(list, compareNamed)
	return list
}

func compareNamed(a, b namedEntry) int {
	return compareTreeNames(a.name, a.e.isDir(), b.name, b.e.isDir())
}

// merged is sorted from the recorded order; ok is false when that order and the names
// added do not account for every entry (sorted then sorts them all).
func (d *dir) merged() (list []namedEntry, ok bool) {
	var added []namedEntry
	var isAdded map[string]bool
	if len(d.added) > 0 {
		isAdded = make(map[string]bool, len(d.added))
		for _, n := range d.added {
			if e, ok := d.entries[n]; ok && !isAdded[n] {
				added = append(added, namedEntry{n, e})
			}
			isAdded[n] = true
		}
		slices.SortFunc(added, compareNamed)
	}
	list = make([]namedEntry, 0, len(d.entries))
	for _, o := range d.order {
		if isAdded[o.name] {
			continue
		}
		e, ok := d.entries[o.name]
		switch {
		case !ok:
			continue // removed
		case e.isDir() != o.dir:
			return nil, false // not where it was: sort them all
		}
		for len(added) > 0 && compareNamed(added[0], namedEntry{o.name, e}) < 0 {
			list, added = append(list, added[0]), added[1:]
		}
		list = append(list, namedEntry{o.name, e})
	}
	list = append(list, added...)
	return list, len(list) == len(d.entries)
}

// compareTreeNames compares two entry names in git's tree order, where a folder's name
// sorts as if it ended with "/", without building that name.
func compareTreeNames(a string, aDir bool, b string, bDir bool) int {
	n := min(len(a), len(b))
	if c := strings.Compare(a[:n], b[:n]); c != 0 {
		return c
	}
	next := func(s string, dir bool) int { // the byte after the common prefix, -1 for none
		switch {
		case len(s) > n:
			return int(s[n])
		case dir:
			return '/'
		}
		return -1
	}
	ca, cb := next(a, aDir), next(b, bDir)
	if ca != cb {
		return ca - cb
	}
	// Equal up to here: only possible past both ends (same name) or when one name's next
	// byte is the other's implicit "/": compare the rest, "/" included.
	return strings.Compare(sortName(a, aDir), sortName(b, bDir))
}

func sortName(name string, dir bool) string {
	if dir {
		return name + "/"
	}
	return name
}

// Files returns the files (name -> blob) of the folder at p; nil when absent.
func (t *Tree) Files(p string) (map[string]plumbing.Hash, error) {
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

// checkNewEntry refuses to add to a tree an entry git would refuse (a .git folder in any
// form, an empty name, "." or ".."): whatever the path came from, the writer never makes
// a commit that git fsck rejects or that cannot be checked out.
func checkNewEntry(p, name string) error {
	if err := controlplane.CheckTreeName(name); err != nil {
		return fmt.Errorf("refusing to write %q: %w", p, err)
	}
	return nil
}
