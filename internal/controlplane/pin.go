package controlplane

import (
	"fmt"
	"path"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// BaseRepoFile is the file that pins an environment's common content.
const BaseRepoFile = "base-repo.yaml"

// PinLocation says where an environment's pin is written: the branch of the control-plane
// repository and the file on it.
type PinLocation struct {
	// Repo is the control-plane repository as it was opened (path or URL).
	Repo   string
	Branch string
	File   string
}

// PinLocation returns where env's base-repo.yaml lives: on the environment's branch in the
// Kalypso layout, at environments/<env>/base-repo.yaml on the tip branch in the folder
// layout. It needs a git control plane.
func (cp *ControlPlane) PinLocation(info EnvironmentInfo) (PinLocation, error) {
	if !cp.repo.IsGit() {
		return PinLocation{}, fmt.Errorf("the control plane %s is not a git repository: nothing can be pinned", cp.repo.Location)
	}
	loc := PinLocation{Repo: cp.repo.Location}
	if cp.layout == LayoutKalypso {
		loc.Branch, loc.File = info.Name, BaseRepoFile
		if info.Object != nil {
			if b := info.Object.Spec.ControlPlane.Branch; b != "" {
				loc.Branch = b
			}
			if p := cleanDir(info.Object.Spec.ControlPlane.Path); p != "" {
				loc.File = p + BaseRepoFile
			}
		}
		return loc, nil
	}
	branch, err := cp.tipBranch()
	if err != nil {
		return PinLocation{}, err
	}
	loc.Branch, loc.File = branch, path.Join(strings.TrimSuffix(environmentsDir, "/"), info.Name, BaseRepoFile)
	return loc, nil
}

// tipBranch is the branch the folder layout's tip is read from: --ref when it names a
// branch, else the branch HEAD points to.
func (cp *ControlPlane) tipBranch() (string, error) {
	if ref := cp.opts.Ref; ref != "" {
		if cp.repo.HasBranch(ref) {
			return ref, nil
		}
		return "", fmt.Errorf("--ref %q is not a branch: a pin is written on a branch", ref)
	}
	head, err := cp.repo.git.Storer.Reference(plumbing.HEAD)
	if err != nil || head.Type() != plumbing.SymbolicReference {
		return "", fmt.Errorf("%s: HEAD is not on a branch; pass --ref BRANCH", cp.repo.Location)
	}
	return head.Target().Short(), nil
}

// CommonTip returns the commit a first environment is pinned to by default: in the Kalypso
// layout the tip of main; in the folder layout the latest commit of the tip branch that
// changed common content (anything outside environments/), so that pins and other
// environment-only commits do not make a new promotable commit.
func (cp *ControlPlane) CommonTip() (string, error) {
	if cp.layout != LayoutFolder {
		h, err := cp.repo.Resolve(cp.mainRef())
		if err != nil {
			return "", err
		}
		return h.String(), nil
	}
	b, err := cp.tipBranch()
	if err != nil {
		return "", err
	}
	h, err := cp.repo.Resolve(b)
	if err != nil {
		return "", err
	}
	c, err := cp.repo.git.CommitObject(h)
	if err != nil {
		return "", err
	}
	return lastCommonChange(c, strings.TrimSuffix(environmentsDir, "/"))
}

// lastCommonChangeAt returns the latest commit at or before ref (HEAD when empty) that changed
// the common content of the folder layout.
func (cp *ControlPlane) lastCommonChangeAt(ref string) (string, error) {
	if !cp.repo.IsGit() {
		return "", errNotFound
	}
	h, err := cp.repo.Resolve(ref)
	if err != nil {
		return "", err
	}
	c, err := cp.repo.git.CommitObject(h)
	if err != nil {
		return "", err
	}
	return lastCommonChange(c, strings.TrimSuffix(environmentsDir, "/"))
}

// maxCommonWalk bounds the history walked to find the last change of common content.
const maxCommonWalk = 10000

// lastCommonChange walks first parents back from c while the root tree, without the
// excluded entry, stays the same.
func lastCommonChange(c *object.Commit, exclude string) (string, error) {
	key, err := treeWithout(c, exclude)
	if err != nil {
		return "", err
	}
	for range maxCommonWalk {
		if c.NumParents() == 0 {
			break
		}
		parent, err := c.Parent(0)
		if err != nil {
			return "", err
		}
		pkey, err := treeWithout(parent, exclude)
		if err != nil {
			return "", err
		}
		if pkey != key {
			break
		}
		c = parent
	}
	return c.Hash.String(), nil
}

// treeWithout identifies a commit's root tree without one entry: its other entries' names,
// modes and hashes.
func treeWithout(c *object.Commit, exclude string) (string, error) {
	t, err := c.Tree()
	if err != nil {
		return "", err
	}
	var b strings.Builder
	for _, e := range t.Entries {
		if e.Name != exclude {
			fmt.Fprintf(&b, "%s %o %s\n", e.Name, e.Mode, e.Hash)
		}
	}
	return b.String(), nil
}

// ResolveCommit turns a (short) commit or ref of the control plane into a full commit.
func (cp *ControlPlane) ResolveCommit(ref string) (string, error) {
	if !cp.repo.IsGit() {
		return "", fmt.Errorf("the control plane is not a git repository")
	}
	h, err := cp.repo.Resolve(ref)
	if err != nil {
		return "", err
	}
	return h.String(), nil
}
