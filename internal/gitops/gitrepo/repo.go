package gitrepo

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/fleetform/fleetform/internal/gitauth"
	"github.com/fleetform/fleetform/internal/repourl"
)

// ErrConflict means the branch moved while fleetform was writing: someone else wrote in
// between. The caller re-reads, re-plans and tries again.
var ErrConflict = errors.New("the branch moved: someone else wrote in between")

// Credentials choose the credential for a repository URL: nil for none (gitauth.Store).
type Credentials interface {
	For(ctx context.Context, url string) (*gitauth.Credential, error)
}

var _ Credentials = (*gitauth.Store)(nil)

// Repo is a GitOps repository fleetform writes: a local repository (path or file:// URL)
// written in place, or a remote one (http, https, ssh) written through a bare cache clone
// and pushed.
type Repo struct {
	location string // as given, for messages (credentials redacted)
	gitDir   string // where objects and refs are (the repository, or the cache clone)
	remote   string // the URL to fetch from and push to; "" when local
	cred     *gitauth.Credential
	logger   *slog.Logger
}

// Open opens location; remote repositories are cloned (bare) into cacheDir and reached
// with the credential creds choose for their URL (nil creds: none). logger must not be nil.
func Open(ctx context.Context, location, cacheDir string, creds Credentials, logger *slog.Logger) (*Repo, error) {
	if strings.HasPrefix(location, "-") { // the git CLI would read it as an option (--upload-pack=...)
		return nil, fmt.Errorf("repository %q: a repository URL or path cannot start with -", repourl.Redact(location))
	}
	if p, ok := repourl.LocalPath(location); ok {
		gitDir, err := findGitDir(p)
		if err != nil {
			return nil, err
		}
		return &Repo{location: location, gitDir: gitDir, logger: logger}, nil
	}
	sum := sha256.Sum256([]byte(repourl.Trim(location)))
	cache := filepath.Join(cacheDir, hex.EncodeToString(sum[:8]))
	r := &Repo{location: repourl.Redact(location), gitDir: cache, remote: location, logger: logger}
	if creds != nil {
		cred, err := creds.For(ctx, location)
		if err != nil {
			return nil, err
		}
		r.cred = cred
	}
	if _, err := os.Stat(filepath.Join(cache, "HEAD")); err != nil {
		if err := os.MkdirAll(cache, 0o700); err != nil {
			return nil, err
		}
		if _, err := r.git(ctx, "init", "--quiet", "--bare"); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// findGitDir returns the git directory of a bare repository or a work tree.
func findGitDir(p string) (string, error) {
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", err
	}
	if st, err := os.Stat(filepath.Join(abs, ".git")); err == nil && st.IsDir() {
		return filepath.Join(abs, ".git"), nil
	}
	if _, err := os.Stat(filepath.Join(abs, "objects")); err == nil {
		return abs, nil
	}
	return "", fmt.Errorf("%s is not a git repository (create it with git init --bare)", p)
}

// open returns a fresh go-git handle for reading (it sees packs written since).
func (r *Repo) open() (*git.Repository, error) {
	g, err := git.PlainOpenWithOptions(r.gitDir, &git.PlainOpenOptions{})
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", r.location, err)
	}
	return g, nil
}

// openAt opens the repository for reading the tree of commit tip (zero: an empty tree) and
// returns the handle and the tree. A go-git handle lists objects/pack once, on its first
// lookup, and when a file vanishes from there while it lists (another process's temporary
// pack being renamed) that listing fails and leaves the handle without any pack; so the
// tip is read with a fresh handle again, a bounded number of times, before giving up.
func (r *Repo) openAt(tip plumbing.Hash) (*git.Repository, plumbing.Hash, error) {
	const attempts = 3
	var err error
	for range attempts {
		var g *git.Repository
		if g, err = r.open(); err != nil {
			return nil, plumbing.ZeroHash, err
		}
		if tip.IsZero() {
			return g, plumbing.ZeroHash, nil
		}
		var c *object.Commit
		if c, err = g.CommitObject(tip); err == nil {
			return g, c.TreeHash, nil
		}
	}
	return nil, plumbing.ZeroHash, fmt.Errorf("read commit %s in %s: %w", tip, r.location, err)
}

// Committer returns who committed commit.
func (r *Repo) Committer(commit plumbing.Hash) (object.Signature, error) {
	g, _, err := r.openAt(commit)
	if err != nil {
		return object.Signature{}, err
	}
	c, err := g.CommitObject(commit)
	if err != nil {
		return object.Signature{}, fmt.Errorf("read commit %s in %s: %w", commit, r.location, err)
	}
	return c.Committer, nil
}

// Tip returns the branch's commit (fetching it first for a remote), or zero when the
// branch does not exist yet.
func (r *Repo) Tip(ctx context.Context, branch string) (plumbing.Hash, error) {
	ref := "refs/heads/" + branch
	if r.remote != "" {
		ref = "refs/remotes/origin/" + branch
		out, err := r.git(ctx, "ls-remote", "--heads", r.remote, "refs/heads/"+branch)
		if err != nil {
			return plumbing.ZeroHash, err
		}
		if len(bytes.TrimSpace(out)) == 0 {
			return plumbing.ZeroHash, nil // the branch does not exist yet
		}
		if _, err := r.git(ctx, "fetch", "--quiet", "--no-tags", r.remote, "+refs/heads/"+branch+":"+ref); err != nil {
			return plumbing.ZeroHash, err
		}
	}
	out, err := r.git(ctx, "rev-parse", "--verify", "--quiet", ref+"^{commit}")
	if err != nil {
		var ee *exec.ExitError
		if errors.As(errors.Unwrap(err), &ee) {
			return plumbing.ZeroHash, nil
		}
		return plumbing.ZeroHash, err
	}
	return plumbing.NewHash(strings.TrimSpace(string(out))), nil
}

// Publish moves the branch from old (zero: create it) to commit, failing with ErrConflict
// when it is no longer at old. Local repositories: an atomic update-ref; remote ones: a
// fast-forward push (a rejected push is a conflict).
func (r *Repo) Publish(ctx context.Context, branch string, commit, old plumbing.Hash) error {
	if r.remote == "" {
		if err := r.checkNotCheckedOut(ctx, branch); err != nil {
			return err
		}
		return r.updateRef(ctx, branch, commit, old)
	}
	return r.push(ctx, commit, "refs/heads/"+branch)
}

// updateRef moves a local branch from old (zero: create it) to commit atomically.
func (r *Repo) updateRef(ctx context.Context, branch string, commit, old plumbing.Hash) error {
	oldArg := old.String()
	if old.IsZero() {
		oldArg = strings.Repeat("0", 40)
	}
	_, err := r.git(ctx, "update-ref", "-m", "fleetform", "refs/heads/"+branch, commit.String(), oldArg)
	if err != nil && strings.Contains(err.Error(), "cannot lock ref") {
		return fmt.Errorf("%w: %w", ErrConflict, err)
	}
	return err
}

// Unpublish moves a local branch back from commit to old, where Publish moved it from (zero
// old: the branch is deleted), only while the branch is still at commit.
func (r *Repo) Unpublish(ctx context.Context, branch string, commit, old plumbing.Hash) error {
	if r.remote != "" {
		return fmt.Errorf("%s: only a local repository's branch is moved back", r.location)
	}
	if !old.IsZero() {
		return r.updateRef(ctx, branch, old, commit)
	}
	_, err := r.git(ctx, "update-ref", "-m", "fleetform", "-d", "refs/heads/"+branch, commit.String())
	return err
}

// PublishFiles is Publish for a commit that changes only files (by path; nil content: the
// file is removed). When branch is the one the repository's work tree has checked out, the
// work tree and its index follow the branch for those files, so that they stay in step with
// it; a file with uncommitted changes is refused before the branch moves.
func (r *Repo) PublishFiles(ctx context.Context, branch string, commit, old plumbing.Hash, files map[string][]byte) error {
	if r.remote != "" || r.checkNotCheckedOut(ctx, branch) == nil {
		return r.Publish(ctx, branch, commit, old)
	}
	workTree := filepath.Dir(r.gitDir)
	paths := slices.Sorted(maps.Keys(files))
	inTree := append([]string{"--work-tree", workTree}, "diff", "--quiet", "HEAD", "--")
	if _, err := r.git(ctx, append(inTree, paths...)...); err != nil {
		return fmt.Errorf("%s has uncommitted changes of %s: commit or discard them first", workTree, strings.Join(paths, ", "))
	}
	if err := r.updateRef(ctx, branch, commit, old); err != nil {
		return err
	}
	var written []string
	for _, p := range paths {
		if files[p] != nil {
			written = append(written, p)
			continue
		}
		// --force: the file was checked clean above; the index still has it, HEAD no longer does
		if _, err := r.git(ctx, "--work-tree", workTree, "rm", "--quiet", "--force", "--ignore-unmatch", "--", p); err != nil {
			return fmt.Errorf("committed %s, but removing %s from the work tree failed: %w", commit, p, err)
		}
	}
	if len(written) > 0 {
		if _, err := r.git(ctx, append([]string{"--work-tree", workTree, "checkout", commit.String(), "--"}, written...)...); err != nil {
			return fmt.Errorf("committed %s, but writing %s into the work tree failed: %w", commit, strings.Join(written, ", "), err)
		}
	}
	return nil
}

// checkNotCheckedOut refuses to move the branch a work tree has checked out: its files
// would no longer match the branch.
func (r *Repo) checkNotCheckedOut(ctx context.Context, branch string) error {
	if filepath.Base(r.gitDir) != ".git" {
		return nil // a bare repository has no work tree
	}
	out, err := r.git(ctx, "symbolic-ref", "--quiet", "HEAD")
	if err == nil && strings.TrimSpace(string(out)) == "refs/heads/"+branch {
		return fmt.Errorf("branch %s is checked out in %s: write to a bare repository, or to another branch",
			branch, filepath.Dir(r.gitDir))
	}
	return nil
}

// push pushes commit to ref on the remote without forcing. A push rejected because the
// branch moved is a conflict: rejected by the client (not a fast-forward), or, when another
// push won the race on the server, refused there when updating the ref.
func (r *Repo) push(ctx context.Context, commit plumbing.Hash, ref string) error {
	_, err := r.git(ctx, "push", "--quiet", "--porcelain", r.remote, commit.String()+":"+ref)
	if err != nil && isPushConflict(err.Error()) {
		return fmt.Errorf("%w: %w", ErrConflict, err)
	}
	return err
}

// pushConflicts are what git says when a push lost a race for the branch.
var pushConflicts = []string{"[rejected]", "non-fast-forward", "fetch first", "stale info",
	"(failed to update ref)", "cannot lock ref"}

func isPushConflict(msg string) bool {
	for _, s := range pushConflicts {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}

// DeleteBranch deletes a branch on the remote (or locally).
func (r *Repo) DeleteBranch(ctx context.Context, branch string) error {
	if r.remote == "" {
		_, err := r.git(ctx, "update-ref", "-d", "refs/heads/"+branch)
		return err
	}
	_, err := r.git(ctx, "push", "--quiet", r.remote, ":refs/heads/"+branch)
	return err
}

// git runs a git command on the repository. It never prompts; credentials come from git's
// credential helpers, or from the credential chosen for the remote's URL (an HTTP header
// git sends to that URL only, passed through the environment, never on the command line);
// URLs in errors are redacted.
func (r *Repo) git(ctx context.Context, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, "git", append([]string{"--git-dir", r.gitDir}, args...)...) //nolint:gosec // git with fixed subcommands; a remote starting with - is refused in Open, branches go behind refs/heads/
	cmd.Env = gitauth.GitEnv(append(os.Environ(), "GIT_TERMINAL_PROMPT=0", "LC_ALL=C"), r.remote, r.cred)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(stderr.String() + "\n" + stdout.String())
		if r.remote != "" {
			msg = strings.ReplaceAll(msg, r.remote, repourl.Redact(r.remote))
		}
		return nil, fmt.Errorf("git %s: %s: %w", args[0], msg, err)
	}
	return stdout.Bytes(), nil
}
