package host

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"

	"github.com/fleetform/fleetform/internal/gitauth"
	"github.com/fleetform/fleetform/internal/repourl"
)

// maxFile bounds one file of the cluster-type folder (rendered manifests are at most 4 MiB).
const maxFile = 8 << 20

// Credentials choose the credential for a repository URL: nil for none (gitauth.Store).
type Credentials interface {
	For(ctx context.Context, url string) (*gitauth.Credential, error)
}

var _ Credentials = (*gitauth.Store)(nil)

// fetcher keeps a bare clone of the GitOps repository in dir and fetches one branch.
type fetcher struct {
	dir    string // the bare repository
	url    string
	branch string
	creds  Credentials
	cred   *gitauth.Credential // chosen for url by the last fetch
}

// fetch fetches the branch (shallow) and returns its commit.
func (f *fetcher) fetch(ctx context.Context) (string, error) {
	if f.creds != nil {
		cred, err := f.creds.For(ctx, f.url) // at every fetch: a token file may have been renewed
		if err != nil {
			return "", err
		}
		f.cred = cred
	}
	if _, err := os.Stat(filepath.Join(f.dir, "HEAD")); err != nil {
		if err := os.MkdirAll(f.dir, 0o700); err != nil {
			return "", fmt.Errorf("create %s: %w", f.dir, err)
		}
		if _, err := f.git(ctx, "init", "--bare", "--quiet"); err != nil {
			return "", err
		}
	}
	ref := "refs/remotes/origin/" + f.branch
	if _, err := f.git(ctx, "fetch", "--quiet", "--no-tags", "--depth=1", f.url, "+refs/heads/"+f.branch+":"+ref); err != nil {
		return "", err
	}
	out, err := f.git(ctx, "rev-parse", "--verify", ref+"^{commit}")
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(out)), nil
}

// extract writes the files of folder at commit into dest (which must not exist), without
// the folder prefix. It fails when the folder does not exist at commit.
func (f *fetcher) extract(ctx context.Context, commit, folder, dest string) error {
	folder = strings.Trim(path.Clean("/"+folder), "/")
	out, err := f.git(ctx, "archive", "--format=tar", commit, "--", folder+"/")
	if err != nil {
		return fmt.Errorf("read %s at %.12s (is the cluster type right?): %w", folder, commit, err)
	}
	if err := os.MkdirAll(dest, 0o700); err != nil {
		return err
	}
	tr := tar.NewReader(bytes.NewReader(out))
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("read the archive of %s: %w", folder, err)
		}
		rel, ok := strings.CutPrefix(h.Name, folder+"/")
		if !ok || rel == "" || h.Typeflag != tar.TypeReg {
			continue // the folder itself, sub-folders (created below), links, the pax header
		}
		if !filepath.IsLocal(rel) || h.Size > maxFile {
			return fmt.Errorf("%s: unexpected path or size in the GitOps repository", h.Name)
		}
		p := filepath.Join(dest, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			return err
		}
		data, err := io.ReadAll(io.LimitReader(tr, maxFile))
		if err != nil {
			return err
		}
		if err := os.WriteFile(p, data, 0o600); err != nil {
			return err
		}
	}
}

// git runs git on the bare repository. It never prompts; credentials come from git's own
// configuration, or from the credential chosen for the URL (an HTTP header git sends to
// that URL only, passed through the environment, never on the command line); URLs in
// errors are redacted.
func (f *fetcher) git(ctx context.Context, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, "git", append([]string{"--git-dir", f.dir}, args...)...) //nolint:gosec // git with fixed subcommands; the URL is the operator's --gitops, the branch goes behind refs/heads/, the folder after --
	cmd.Env = gitauth.GitEnv(childEnv("GIT_TERMINAL_PROMPT=0", "LC_ALL=C"), f.url, f.cred)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(stderr.String())
		msg = strings.ReplaceAll(msg, f.url, repourl.Redact(f.url))
		return nil, fmt.Errorf("git %s: %s: %w", args[0], msg, err)
	}
	return stdout.Bytes(), nil
}
