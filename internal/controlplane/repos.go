package controlplane

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/transport"
	"github.com/go-git/go-git/v5/storage/filesystem/dotgit"
	"github.com/go-git/go-git/v5/storage/memory"

	"github.com/fleetform/fleetform/internal/repourl"
)

// RepoMap maps repository URLs to local directories or git repositories. A key ending in
// "/" maps every URL under it: the rest of the URL is appended to the value.
type RepoMap map[string]string

// Lookup returns the local location of url, if mapped. An exact key wins over the
// trimmed ones (repourl.Trim: a trailing "/" or ".git" ignored), which win over prefixes,
// the longest first. The scheme counts: an http:// URL is not mapped by an https:// key.
// What a prefix maps never leaves the mapped folder: ".." cannot climb above it.
func (m RepoMap) Lookup(url string) (string, bool) {
	if v, ok := m[url]; ok && !strings.HasSuffix(url, "/") {
		return v, true
	}
	n := repourl.Trim(url)
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if repourl.Trim(k) == n && !strings.HasSuffix(k, "/") {
			return m[k], true
		}
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		if strings.HasSuffix(k, "/") {
			keys = append(keys, k)
		}
	}
	sort.Slice(keys, func(i, j int) bool { return len(keys[i]) > len(keys[j]) }) // longest prefix wins
	for _, k := range keys {
		if rest, ok := strings.CutPrefix(n, strings.TrimSuffix(k, "/")+"/"); ok {
			return filepath.Join(m[k], filepath.FromSlash(path.Clean("/"+rest))), true
		}
	}
	return "", false
}

// Repo is an opened repository: a plain directory or a git repository.
type Repo struct {
	// Location is what was opened (URL or path), for messages.
	Location string
	dir      string
	git      *git.Repository
}

// IsGit reports whether the repository has git history (refs and commits).
func (r *Repo) IsGit() bool { return r.git != nil }

// Git returns the underlying go-git repository, or nil for a directory.
func (r *Repo) Git() *git.Repository { return r.git }

// Tree returns the tree at ref: a branch, tag or commit. For a directory the ref is ignored.
// An empty ref means HEAD.
func (r *Repo) Tree(ref string) (Tree, error) {
	if r.git == nil {
		return DirTree(r.dir), nil
	}
	h, err := r.Resolve(ref)
	if err != nil {
		return nil, err
	}
	c, err := r.git.CommitObject(h)
	if err != nil {
		return nil, fmt.Errorf("read commit %s: %w", h, err)
	}
	t, err := c.Tree()
	if err != nil {
		return nil, fmt.Errorf("read tree of %s: %w", h, err)
	}
	return gitTree{commit: h.String(), tree: t}, nil
}

// Resolve turns a branch, tag or (short) commit into a commit hash.
func (r *Repo) Resolve(ref string) (plumbing.Hash, error) {
	if ref == "" {
		ref = "HEAD"
	}
	h, err := r.git.ResolveRevision(plumbing.Revision(ref))
	if err != nil {
		if werr := r.movedSinceOpened(ref); werr != nil {
			return plumbing.ZeroHash, fmt.Errorf("%s: ref %q: %w", r.Location, ref, werr)
		}
		return plumbing.ZeroHash, fmt.Errorf("%s: ref %q: %w", r.Location, ref, errNotFound)
	}
	return *h, nil
}

// ErrMoved means the repository was written to while it was read: a ref names a commit
// written since it was opened (in a pack it has not listed), or its file was being rewritten.
// Reading it again sees the change.
var ErrMoved = errors.New("the repository changed while it was read")

// movedSinceOpened tells a ref that did not resolve because another writer changed the
// repository since it was opened from one that does not exist (nil).
func (r *Repo) movedSinceOpened(ref string) error {
	names := []plumbing.ReferenceName{plumbing.HEAD}
	if ref != "HEAD" {
		names = []plumbing.ReferenceName{plumbing.NewBranchReferenceName(ref), plumbing.ReferenceName(ref)}
	}
	for _, n := range names {
		got, err := r.git.Reference(n, true)
		switch {
		case errors.Is(err, dotgit.ErrEmptyRefFile):
			return fmt.Errorf("%w: %w", ErrMoved, err)
		case err != nil:
			continue
		}
		if _, err := r.git.CommitObject(got.Hash()); errors.Is(err, plumbing.ErrObjectNotFound) {
			return fmt.Errorf("%w: %s is at %s, written since", ErrMoved, n, got.Hash())
		}
	}
	return nil
}

// HasBranch reports whether the repository has the branch.
func (r *Repo) HasBranch(name string) bool {
	if r.git == nil {
		return false
	}
	_, err := r.git.Reference(plumbing.NewBranchReferenceName(name), true)
	return err == nil
}

// Repos opens repositories by URL or path, honouring a RepoMap, and caches them.
type Repos struct {
	repoMap RepoMap
	creds   Credentials
	logger  *slog.Logger
	mu      sync.Mutex
	cache   map[string]*Repo
	// failed remembers the repositories that could not be opened, when rememberFailures is
	// set (a control plane's Repos, which lives for one load): every environment of the
	// load gets the same error without fetching (and logging) again.
	failed           map[string]error
	rememberFailures bool
}

// NewRepos returns a Repos that resolves URLs through m and fetches remote repositories
// with the credentials creds chooses (nil: none).
func NewRepos(m RepoMap, creds Credentials, logger *slog.Logger) *Repos {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &Repos{repoMap: m, creds: creds, logger: logger, cache: map[string]*Repo{}, failed: map[string]error{}}
}

// newLoadRepos returns the Repos of one opened control plane: a repository that cannot be
// opened is tried once, and its error returned to every later Open.
func newLoadRepos(m RepoMap, creds Credentials, logger *slog.Logger) *Repos {
	rs := NewRepos(m, creds, logger)
	rs.rememberFailures = true
	return rs
}

// Mapped reports whether url is mapped to a local location.
func (rs *Repos) Mapped(url string) bool {
	_, ok := rs.repoMap.Lookup(url)
	return ok
}

// Open opens url (a URL or a local path), through the repo map when it is mapped.
func (rs *Repos) Open(ctx context.Context, url string) (*Repo, error) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if r, ok := rs.cache[url]; ok {
		return r, nil
	}
	if err, ok := rs.failed[url]; ok {
		return nil, err
	}
	loc := url
	if mapped, ok := rs.repoMap.Lookup(url); ok {
		loc = mapped
	}
	r, err := rs.open(ctx, loc)
	if err != nil {
		if rs.rememberFailures && ctx.Err() == nil {
			rs.failed[url] = err
		}
		return nil, err
	}
	r.Location = url
	rs.cache[url] = r
	return r, nil
}

func (rs *Repos) open(ctx context.Context, loc string) (*Repo, error) {
	if p, ok := repourl.LocalPath(loc); ok {
		return openLocal(p)
	}
	rs.logger.InfoContext(ctx, "fetching repository", "url", repourl.Redact(loc))
	remote, auth, err := remoteAuth(ctx, rs.creds, loc)
	if err != nil {
		return nil, err
	}
	return fetchRemote(ctx, remote, auth)
}

func openLocal(p string) (*Repo, error) {
	st, err := os.Stat(p)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", p, err)
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("open %s: not a directory", p)
	}
	if isGitDir(p) {
		g, err := git.PlainOpenWithOptions(p, &git.PlainOpenOptions{EnableDotGitCommonDir: true})
		if err != nil {
			return nil, fmt.Errorf("open git repository %s: %w", p, err)
		}
		return &Repo{dir: p, git: g}, nil
	}
	return &Repo{dir: p}, nil
}

// isGitDir reports whether p is the top of a git work tree or a bare repository.
func isGitDir(p string) bool {
	if _, err := os.Stat(filepath.Join(p, ".git")); err == nil {
		return true
	}
	_, errHead := os.Stat(filepath.Join(p, "HEAD"))
	_, errObj := os.Stat(filepath.Join(p, "objects"))
	return errHead == nil && errObj == nil
}

// fetchRemote fetches every branch and tag of a remote repository into memory, with auth
// (nil: go-git's defaults, ssh-agent for ssh URLs).
func fetchRemote(ctx context.Context, url string, auth transport.AuthMethod) (*Repo, error) {
	g, err := git.Init(memory.NewStorage(), nil)
	if err != nil {
		return nil, err
	}
	remote, err := g.CreateRemote(&config.RemoteConfig{Name: "origin", URLs: []string{url}})
	if err != nil {
		return nil, err
	}
	err = remote.FetchContext(ctx, &git.FetchOptions{
		RefSpecs: []config.RefSpec{"+refs/heads/*:refs/heads/*", "+refs/tags/*:refs/tags/*"},
		Auth:     auth,
		Tags:     git.NoTags,
	})
	if err != nil && !errors.Is(err, git.NoErrAlreadyUpToDate) {
		return nil, fmt.Errorf("fetch %s: %w", repourl.Redact(url), err)
	}
	if head, err := remote.ListContext(ctx, &git.ListOptions{Auth: auth}); err == nil {
		for _, ref := range head {
			if ref.Name() == plumbing.HEAD && ref.Type() == plumbing.SymbolicReference {
				_ = g.Storer.SetReference(plumbing.NewSymbolicReference(plumbing.HEAD, ref.Target()))
			}
		}
	}
	return &Repo{git: g}, nil
}
