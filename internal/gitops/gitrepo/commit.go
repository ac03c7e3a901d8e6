package gitrepo

import (
	"fmt"
	"io"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// Commit writes the edited tree, a commit of it with parent (none when zero), message and
// sig as author and committer, and every object they need into the repository as one
// pack, and returns the commit. No branch moves: Publish does that.
func (t *Tree) Commit(parent plumbing.Hash, message string, sig object.Signature) (plumbing.Hash, error) {
	return t.CommitAs(parent, message, sig, sig)
}

// CommitAs is Commit with an author other than the committer.
func (t *Tree) CommitAs(parent plumbing.Hash, message string, author, committer object.Signature) (plumbing.Hash, error) {
	root, _ := t.writeDir(t.root)
	c := &object.Commit{Author: author, Committer: committer, Message: message, TreeHash: root}
	if !parent.IsZero() {
		c.ParentHashes = []plumbing.Hash{parent}
	}
	obj := &plumbing.MemoryObject{}
	if err := c.Encode(obj); err != nil {
		t.pack.discard()
		return plumbing.ZeroHash, err
	}
	data, err := readObject(obj)
	if err != nil {
		t.pack.discard()
		return plumbing.ZeroHash, fmt.Errorf("encode commit: %w", err)
	}
	h := t.pack.add(plumbing.CommitObject, data)
	if _, err := t.pack.write(); err != nil {
		return plumbing.ZeroHash, err
	}
	return h, nil
}

// Blob reads a blob of the repository.
func (t *Tree) Blob(h plumbing.Hash) ([]byte, error) {
	typ, data, err := t.objects.read(h)
	if err == nil && typ != plumbing.BlobObject {
		err = fmt.Errorf("a %s, not a blob", typ)
	}
	if err != nil {
		return nil, fmt.Errorf("read blob %s: %w", h, err)
	}
	return data, nil
}

// readObject returns the content of an encoded object.
func readObject(obj plumbing.EncodedObject) (data []byte, err error) {
	r, err := obj.Reader()
	if err != nil {
		return nil, err
	}
	defer func() {
		if cerr := r.Close(); err == nil {
			err = cerr
		}
	}()
	data = make([]byte, obj.Size())
	_, err = io.ReadFull(r, data)
	return data, err
}
