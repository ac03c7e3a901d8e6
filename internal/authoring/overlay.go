package authoring

import (
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"
	"time"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/storer"
	"github.com/go-git/go-git/v5/storage/memory"
)

// overlay is a git storage whose new objects and references live in memory, on top of a
// repository it only reads: the in-memory copy a change is validated on.
type overlay struct {
	*memory.Storage
	base storer.EncodedObjectStorer
}

func (o *overlay) EncodedObject(t plumbing.ObjectType, h plumbing.Hash) (plumbing.EncodedObject, error) {
	obj, err := o.Storage.EncodedObject(t, h)
	if errors.Is(err, plumbing.ErrObjectNotFound) {
		return o.base.EncodedObject(t, h)
	}
	return obj, err
}

func (o *overlay) HasEncodedObject(h plumbing.Hash) error {
	if err := o.Storage.HasEncodedObject(h); err == nil {
		return nil
	}
	return o.base.HasEncodedObject(h)
}

func (o *overlay) EncodedObjectSize(h plumbing.Hash) (int64, error) {
	n, err := o.Storage.EncodedObjectSize(h)
	if errors.Is(err, plumbing.ErrObjectNotFound) {
		return o.base.EncodedObjectSize(h)
	}
	return n, err
}

// newOverlay returns a repository over base with base's branches, tags and HEAD.
func newOverlay(base *git.Repository) (*git.Repository, *overlay, error) {
	o := &overlay{Storage: memory.NewStorage(), base: base.Storer}
	refs, err := base.Storer.IterReferences()
	if err != nil {
		return nil, nil, err
	}
	err = refs.ForEach(func(r *plumbing.Reference) error {
		if r.Name().IsBranch() || r.Name().IsTag() || r.Name() == plumbing.HEAD {
			return o.SetReference(r)
		}
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	if head, err := base.Storer.Reference(plumbing.HEAD); err == nil {
		if err := o.SetReference(head); err != nil {
			return nil, nil, err
		}
	}
	g, err := git.Open(o, nil)
	return g, o, err
}

// commitFiles writes files (path -> content, nil removes) on top of parent's tree (zero:
// an empty tree) as a commit in s.
func commitFiles(s storer.EncodedObjectStorer, parent plumbing.Hash, files map[string][]byte, msg string, sig object.Signature) (plumbing.Hash, error) {
	var root plumbing.Hash
	var parents []plumbing.Hash
	if !parent.IsZero() {
		c, err := object.GetCommit(s, parent)
		if err != nil {
			return plumbing.ZeroHash, err
		}
		root, parents = c.TreeHash, []plumbing.Hash{parent}
	}
	tree, err := editTree(s, root, files)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	if sig.When.IsZero() {
		sig.When = time.Now()
	}
	c := &object.Commit{Author: sig, Committer: sig, Message: msg, TreeHash: tree, ParentHashes: parents}
	obj := s.NewEncodedObject()
	if err := c.Encode(obj); err != nil {
		return plumbing.ZeroHash, err
	}
	return s.SetEncodedObject(obj)
}

// editTree returns the tree root (zero: empty) with files changed; empty folders vanish.
func editTree(s storer.EncodedObjectStorer, root plumbing.Hash, files map[string][]byte) (plumbing.Hash, error) {
	entries := map[string]object.TreeEntry{}
	if !root.IsZero() {
		t, err := object.GetTree(s, root)
		if err != nil {
			return plumbing.ZeroHash, err
		}
		for _, e := range t.Entries {
			entries[e.Name] = e
		}
	}
	sub := map[string]map[string][]byte{}
	for p, content := range files {
		first, rest, nested := strings.Cut(path.Clean(p), "/")
		if !nested {
			if content == nil {
				delete(entries, first)
				continue
			}
			h, err := writeObject(s, plumbing.BlobObject, content)
			if err != nil {
				return plumbing.ZeroHash, err
			}
			entries[first] = object.TreeEntry{Name: first, Mode: filemode.Regular, Hash: h}
			continue
		}
		if sub[first] == nil {
			sub[first] = map[string][]byte{}
		}
		sub[first][rest] = content
	}
	for name, fs := range sub {
		var base plumbing.Hash
		if e, ok := entries[name]; ok {
			if e.Mode != filemode.Dir {
				return plumbing.ZeroHash, fmt.Errorf("%s is a file, not a folder", name)
			}
			base = e.Hash
		}
		h, err := editTree(s, base, fs)
		if err != nil {
			return plumbing.ZeroHash, err
		}
		if h.IsZero() {
			delete(entries, name)
		} else {
			entries[name] = object.TreeEntry{Name: name, Mode: filemode.Dir, Hash: h}
		}
	}
	if len(entries) == 0 {
		return plumbing.ZeroHash, nil
	}
	list := make([]object.TreeEntry, 0, len(entries))
	for _, e := range entries {
		list = append(list, e)
	}
	slices.SortFunc(list, func(a, b object.TreeEntry) int { return strings.Compare(sortKey(a), sortKey(b)) })
	t := &object.Tree{Entries: list}
	obj := s.NewEncodedObject()
	if err := t.Encode(obj); err != nil {
		return plumbing.ZeroHash, err
	}
	return s.SetEncodedObject(obj)
}

// sortKey is git's tree order: folders sort as if their name ended with "/".
func sortKey(e object.TreeEntry) string {
	if e.Mode == filemode.Dir {
		return e.Name + "/"
	}
	return e.Name
}

func writeObject(s storer.EncodedObjectStorer, t plumbing.ObjectType, content []byte) (plumbing.Hash, error) {
	obj := s.NewEncodedObject()
	obj.SetType(t)
	obj.SetSize(int64(len(content)))
	w, err := obj.Writer()
	if err != nil {
		return plumbing.ZeroHash, err
	}
	if _, err := w.Write(content); err != nil {
		return plumbing.ZeroHash, err
	}
	if err := w.Close(); err != nil {
		return plumbing.ZeroHash, err
	}
	return s.SetEncodedObject(obj)
}
