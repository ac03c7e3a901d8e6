package controlplane

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"path/filepath"
	"strconv"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/storage/memory"

	"github.com/fleetform/fleetform/internal/repourl"
)

// DirRef is the one "ref" of a plain directory in Refs: a fingerprint of its files.
const DirRef = ""

// Refs returns where a repository's branches point, without fetching anything: branch name
// to commit, and "HEAD" to the commit HEAD resolves to. A remote repository is asked the way
// `git ls-remote` does (with the credentials its URL is allowed); a local git repository is
// read afresh; a plain directory has one entry, DirRef, a fingerprint of its files' names,
// sizes and modification times (it changes when a file does).
func (rs *Repos) Refs(ctx context.Context, url string) (map[string]string, error) {
	loc := url
	if mapped, ok := rs.repoMap.Lookup(url); ok {
		loc = mapped
	}
	p, local := repourl.LocalPath(loc)
	if !local {
		return rs.remoteRefs(ctx, loc)
	}
	if !isGitDir(p) {
		fp, err := dirFingerprint(p)
		if err != nil {
			return nil, err
		}
		return map[string]string{DirRef: fp}, nil
	}
	g, err := git.PlainOpenWithOptions(p, &git.PlainOpenOptions{EnableDotGitCommonDir: true})
	if err != nil {
		return nil, fmt.Errorf("open git repository %s: %w", p, err)
	}
	return localRefs(g)
}

func localRefs(g *git.Repository) (map[string]string, error) {
	out := map[string]string{}
	iter, err := g.Branches()
	if err != nil {
		return nil, err
	}
	err = iter.ForEach(func(r *plumbing.Reference) error {
		out[r.Name().Short()] = r.Hash().String()
		return nil
	})
	if err != nil {
		return nil, err
	}
	if h, err := g.Head(); err == nil { // the reference alone: no object read
		out["HEAD"] = h.Hash().String()
	}
	return out, nil
}

func (rs *Repos) remoteRefs(ctx context.Context, url string) (map[string]string, error) {
	clean, auth, err := remoteAuth(ctx, rs.creds, url)
	if err != nil {
		return nil, err
	}
	remote := git.NewRemote(memory.NewStorage(), &config.RemoteConfig{Name: "origin", URLs: []string{clean}})
	refs, err := remote.ListContext(ctx, &git.ListOptions{Auth: auth})
	if err != nil {
		return nil, fmt.Errorf("list the branches of %s: %w", repourl.Redact(url), err)
	}
	out := map[string]string{}
	byName := map[plumbing.ReferenceName]plumbing.Hash{}
	for _, r := range refs {
		if r.Type() == plumbing.HashReference {
			byName[r.Name()] = r.Hash()
		}
		if r.Name().IsBranch() {
			out[r.Name().Short()] = r.Hash().String()
		}
	}
	for _, r := range refs {
		if r.Name() == plumbing.HEAD {
			if r.Type() == plumbing.SymbolicReference {
				out["HEAD"] = byName[r.Target()].String()
			} else {
				out["HEAD"] = r.Hash().String()
			}
		}
	}
	return out, nil
}

// dirFingerprint hashes the names, sizes and modification times of every file under dir
// (.git folders aside).
func dirFingerprint(dir string) (string, error) {
	h := sha256.New()
	err := filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if e.IsDir() && e.Name() == ".git" {
			return filepath.SkipDir
		}
		if !e.Type().IsRegular() {
			return nil
		}
		info, err := e.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		h.Write([]byte(rel + "\x00" + strconv.FormatInt(info.Size(), 10) + "\x00" + strconv.FormatInt(info.ModTime().UnixNano(), 10) + "\n"))
		return nil
	})
	if err != nil {
		return "", fmt.Errorf("read %s: %w", dir, err)
	}
	return "dir:" + hex.EncodeToString(h.Sum(nil))[:40], nil
}

// ChangedFiles lists the files that differ between two commits of a git repository (added,
// modified or deleted), as slash-separated paths.
func (r *Repo) ChangedFiles(from, to string) ([]string, error) {
	if r.git == nil {
		return nil, fmt.Errorf("%s is not a git repository", r.Location)
	}
	trees := make([]*object.Tree, 2)
	for i, rev := range []string{from, to} {
		c, err := r.git.CommitObject(plumbing.NewHash(rev))
		if err != nil {
			return nil, fmt.Errorf("read commit %s: %w", rev, err)
		}
		if trees[i], err = c.Tree(); err != nil {
			return nil, fmt.Errorf("read the tree of %s: %w", rev, err)
		}
	}
	changes, err := object.DiffTree(trees[0], trees[1])
	if err != nil {
		return nil, fmt.Errorf("compare %s and %s: %w", from, to, err)
	}
	out := make([]string, 0, len(changes))
	for _, c := range changes {
		name := c.To.Name
		if name == "" {
			name = c.From.Name
		}
		out = append(out, name)
	}
	return out, nil
}
