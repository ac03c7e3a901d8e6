package controlplane

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"path"
	"slices"
	"strconv"
	"strings"
)

// InputTree is one tree a load read: a repository at a ref, and the identity it had when it
// was read (the commit for a git repository; for a directory, a digest of its file names and
// of the content of the files a load may read, taken before any of them was read). The
// same trees at the same identities load the same snapshot, so a caller may keep what it
// made from a load and reuse it as long as SameInputs holds.
type InputTree struct {
	// Repo is the URL or path the load opened ("" for the control plane itself).
	Repo string `json:"repo"`
	// Ref is the ref asked for (ignored for a directory).
	Ref string `json:"ref"`
	// Identity is the commit, or "dir sha256:<hex>" for a directory (see dirIdentity).
	Identity string `json:"identity"`
}

// reads records the trees one load reads. A nil *reads reads without recording.
type reads struct {
	list []InputTree
	dirs map[string]string // directory -> identity, computed once per load
}

// tree returns r's tree at ref and records it under name ("" for the control plane).
func (rd *reads) tree(r *Repo, name, ref string) (Tree, error) {
	if rd == nil {
		return r.Tree(ref)
	}
	var dirID string
	if !r.IsGit() {
		// The digest is taken before the files are read: a file changed in between makes
		// the next check differ, never the other way round.
		if rd.dirs == nil {
			rd.dirs = map[string]string{}
		}
		if id, ok := rd.dirs[r.dir]; ok {
			dirID = id
		} else {
			id, err := dirIdentity(r.dir)
			if err != nil {
				return nil, err
			}
			rd.dirs[r.dir], dirID = id, id
		}
	}
	t, err := r.Tree(ref)
	if err != nil {
		return nil, err
	}
	id := t.Revision()
	if !r.IsGit() {
		id = dirID
	}
	rd.list = append(rd.list, InputTree{Repo: name, Ref: ref, Identity: id})
	return t, nil
}

// sorted returns the trees read, sorted and without repeats.
func (rd *reads) sorted() []InputTree {
	out := slices.Clone(rd.list)
	slices.SortFunc(out, func(a, b InputTree) int {
		return strings.Compare(a.Repo+"\x00"+a.Ref+"\x00"+a.Identity, b.Repo+"\x00"+b.Ref+"\x00"+b.Identity)
	})
	return slices.Compact(out)
}

// dirIdentity digests a directory tree: the name of every file (those of Tree.Files), and
// the content of those a load may read (YAML files and .sourceignore files). The content
// of the others (a chart archive, an image) is never read by a load, nor here.
func dirIdentity(root string) (string, error) {
	t := DirTree(root)
	files, err := t.Files()
	if err != nil {
		return "", fmt.Errorf("list %s: %w", root, err)
	}
	h := sha256.New()
	for _, f := range files {
		h.Write([]byte(f))
		h.Write([]byte{0})
		if !isYAML(f) && path.Base(f) != ".sourceignore" {
			h.Write([]byte("-\x00"))
			continue
		}
		data, err := t.ReadFile(f)
		if err != nil {
			// Unreadable now: the load reports it. Its message is part of the identity, so
			// the file becoming readable changes it.
			data = []byte("unreadable: " + err.Error())
		}
		h.Write([]byte(strconv.Itoa(len(data))))
		h.Write([]byte{0})
		h.Write(data)
	}
	return "dir sha256:" + hex.EncodeToString(h.Sum(nil)), nil
}

// ReadContext says what, besides the trees read, chose the refs a load reads: the layout
// and the main branch (both derived from the repository when not given).
func (cp *ControlPlane) ReadContext() string {
	return fmt.Sprintf("layout=%s main=%s", cp.layout, cp.mainRef())
}

// SameInputs reports whether every tree of inputs still has its identity (a repository
// that cannot be opened or a ref that no longer resolves does not). The control plane is
// to be freshly opened: repositories are read as they are now.
func (cp *ControlPlane) SameInputs(ctx context.Context, inputs []InputTree) bool {
	dirs := map[string]string{}
	for _, in := range inputs {
		if ctx.Err() != nil {
			return false
		}
		repo := cp.repo
		if in.Repo != "" {
			var err error
			if repo, err = cp.repos.Open(ctx, in.Repo); err != nil {
				return false
			}
		}
		var id string
		switch {
		case repo.IsGit():
			h, err := repo.Resolve(in.Ref)
			if err != nil {
				return false
			}
			id = h.String()
		case dirs[repo.dir] != "":
			id = dirs[repo.dir]
		default:
			var err error
			if id, err = dirIdentity(repo.dir); err != nil {
				return false
			}
			dirs[repo.dir] = id
		}
		if id != in.Identity {
			return false
		}
	}
	return true
}
