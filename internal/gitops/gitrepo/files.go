package gitrepo

import (
	"context"
	"errors"
	"maps"
	"slices"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// WriteFiles writes files (path -> content; nil content removes the file) as one commit
// with message and sig on top of the branch's tip, and returns the commit and the tip it
// was made on (zero when the branch does not exist). The branch does not move: Publish
// does that. commit is zero when the files already have that content.
func (r *Repo) WriteFiles(ctx context.Context, branch string, files map[string][]byte, message string, sig object.Signature) (commit, tip plumbing.Hash, err error) {
	tip, err = r.Tip(ctx, branch)
	if err != nil {
		return plumbing.ZeroHash, plumbing.ZeroHash, err
	}
	commit, err = r.WriteFilesOn(tip, files, message, sig, sig)
	return commit, tip, err
}

// WriteFilesOn writes files as WriteFiles does, as one commit on top of tip (zero: a first
// commit) with author and committer, without reading or moving any branch. commit is zero
// when the files already have that content.
func (r *Repo) WriteFilesOn(tip plumbing.Hash, files map[string][]byte, message string, author, committer object.Signature) (commit plumbing.Hash, err error) {
	t, err := r.Edit(tip)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	defer t.Discard() // nothing to drop once committed
	changed := false
	for _, p := range slices.Sorted(maps.Keys(files)) {
		content := files[p]
		if content == nil {
			removed, err := t.Remove(p)
			if err != nil {
				return plumbing.ZeroHash, err
			}
			changed = changed || len(removed) > 0
			continue
		}
		action, _, err := t.SetFile(p, content)
		if err != nil {
			return plumbing.ZeroHash, err
		}
		changed = changed || action != Unchanged
	}
	if !changed {
		return plumbing.ZeroHash, nil
	}
	return t.CommitAs(tip, message, author, committer)
}

// ReadFile reads a file at the tip of a branch; ok is false when the branch or the file
// does not exist.
func (r *Repo) ReadFile(ctx context.Context, branch, path string) (content []byte, commit plumbing.Hash, ok bool, err error) {
	tip, err := r.Tip(ctx, branch)
	if err != nil || tip.IsZero() {
		return nil, tip, false, err
	}
	g, root, err := r.openAt(tip)
	if err != nil {
		return nil, tip, false, err
	}
	tree, err := g.TreeObject(root)
	if err != nil {
		return nil, tip, false, err
	}
	f, err := tree.File(path)
	if err != nil {
		return nil, tip, false, nil //nolint:nilerr // a missing file is not an error here
	}
	s, err := f.Contents()
	return []byte(s), tip, err == nil, err
}

// Folders lists, at the tip of a branch, the folders under path and the folders inside each
// (in the GitOps layout: cluster types and their deployment targets), leaving out hidden
// folders such as .github. commit is the zero hash when the branch does not exist.
func (r *Repo) Folders(ctx context.Context, branch, path string) (commit plumbing.Hash, folders map[string][]string, err error) {
	tip, err := r.Tip(ctx, branch)
	if err != nil || tip.IsZero() {
		return tip, nil, err
	}
	g, err := r.open()
	if err != nil {
		return tip, nil, err
	}
	c, err := g.CommitObject(tip)
	if err != nil {
		return tip, nil, err
	}
	root, err := c.Tree()
	if err == nil && strings.Trim(path, "/") != "" {
		root, err = root.Tree(strings.Trim(path, "/"))
	}
	if errors.Is(err, object.ErrDirectoryNotFound) {
		return tip, map[string][]string{}, nil
	} else if err != nil {
		return tip, nil, err
	}
	folders = map[string][]string{}
	for _, e := range root.Entries {
		if e.Mode != filemode.Dir || strings.HasPrefix(e.Name, ".") {
			continue
		}
		sub, err := root.Tree(e.Name)
		if err != nil {
			return tip, nil, err
		}
		inner := []string{}
		for _, s := range sub.Entries {
			if s.Mode == filemode.Dir {
				inner = append(inner, s.Name)
			}
		}
		folders[e.Name] = inner
	}
	return tip, folders, nil
}
