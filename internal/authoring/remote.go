package authoring

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/fleetform/fleetform/internal/gitops/gitrepo"
	"github.com/fleetform/fleetform/internal/repourl"
)

// mirrorDir is the folder of CacheDir where the mirrors of remote control planes are kept.
const mirrorDir = "authoring"

// checkMode refuses a mode that does not fit where the control plane is: a remote one is
// pushed to or proposed to, a local one is written or committed to.
func checkMode(req Request) error {
	_, local := repourl.LocalPath(req.ControlPlane)
	switch {
	case !local && (req.Mode == ModeWrite || req.Mode == "" || req.Mode == ModeCommit):
		return fmt.Errorf("%s is a remote control plane: a change is pushed to it (push) or proposed as a pull request (pr), not committed in place",
			repourl.Redact(req.ControlPlane))
	case local && req.Mode == ModePush:
		return fmt.Errorf("push: %s is a local control plane: a change is committed to it (commit)", req.ControlPlane)
	}
	return nil
}

// openMirror brings the mirror of the remote control plane of req up to the remote's
// tips: a bare repository in req.CacheDir, fetched with the credential chosen for its URL.
func openMirror(ctx context.Context, req Request) (*gitrepo.Repo, error) {
	if req.CacheDir == "" {
		return nil, fmt.Errorf("%s: %w", repourl.Redact(req.ControlPlane), ErrNotLocal)
	}
	repo, err := gitrepo.Open(ctx, req.ControlPlane, filepath.Join(req.CacheDir, mirrorDir), req.Credentials, req.Logger)
	if err != nil {
		return nil, err
	}
	if err := repo.Mirror(ctx); err != nil {
		return nil, fmt.Errorf("fetch the control plane: %w", err)
	}
	return repo, nil
}

// push commits the change on each branch it touches, in the mirror, on the tip the change
// was made on, and pushes them to the remote in one atomic push that moves each branch
// only from that tip: when one moved, nothing is pushed and the change is made again.
func (ws *workspace) push(ctx context.Context, req Request, msg string) ([]CommitRef, error) {
	if ws.mirror == nil {
		return nil, fmt.Errorf("push: %s is not a remote control plane", ws.location)
	}
	author, committer := ws.signatures(req)
	groups, branches := ws.byBranch(), ws.branchOrder()
	var updates []gitrepo.Update
	out := []CommitRef{}
	for _, branch := range branches {
		if _, err := ws.tree(branch); err != nil { // the tip, for a branch only written to
			return nil, err
		}
		base := ws.tips[branch]
		commit, err := ws.mirror.WriteFilesOn(base, groups[branch], msg, author, committer)
		if err != nil {
			return nil, err
		}
		if commit.IsZero() {
			continue
		}
		updates = append(updates, gitrepo.Update{Branch: branch, Commit: commit, Old: base})
		out = append(out, CommitRef{Branch: branch, Commit: commit.String()})
	}
	err := ws.mirror.PushAll(ctx, updates)
	if errors.Is(err, gitrepo.ErrConflict) {
		return nil, &movedError{branch: strings.Join(branches, ", ")}
	}
	if err != nil {
		return nil, fmt.Errorf("push to %s: %w", repourl.Redact(ws.remote), err)
	}
	return out, nil
}
