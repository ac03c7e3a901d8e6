package gitops

import (
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/fleetform/fleetform/internal/gitops/gitrepo"
)

// The planner reads and edits the branch's tree through the two interfaces below, the
// slice of the git plumbing (package gitrepo, whose *Tree has them) that the policy uses,
// split into reading and writing as fluxcd/pkg/git/repository splits its Reader and Writer
// (treeReader and treeWriter: Writer, here, is the apply writer). The Writer itself opens
// the repository, reads the branch's tip and publishes the commit on the *gitrepo.Repo it
// opened.

// treeReader reads the tree a plan is made against, the branch tip's as edited so far:
// paths are slash-separated and relative to the repository's root.
type treeReader interface {
	// File returns the blob of the file at p, if there is one.
	File(p string) (blob plumbing.Hash, ok bool, err error)
	// Files returns the files (name -> blob) of the folder dir; nil when absent.
	Files(dir string) (map[string]plumbing.Hash, error)
	// List returns the file and folder names in dir, sorted; nil when absent.
	List(dir string) (files, dirs []string, err error)
	// DirHash returns the object name of the folder dir as read (zero: absent or new).
	DirHash(dir string) (plumbing.Hash, error)
	// Blob reads a blob.
	Blob(h plumbing.Hash) ([]byte, error)
	// ReadAhead reads the folder whose DirHash is h for a later read or edit to take; it
	// may run on another goroutine while the tree is being edited.
	ReadAhead(h plumbing.Hash)
}

// treeWriter edits that tree in memory, and writes it with the objects it needs as a
// commit.
type treeWriter interface {
	// SetFile gives the file at p the content and says what changed, with the previous blob.
	SetFile(p string, content []byte) (gitrepo.Action, plumbing.Hash, error)
	// SetFiles is SetFile for files of the folder dir, with what changed for each in changes.
	SetFiles(dir string, files []gitrepo.File, changes []gitrepo.FileChange) error
	// Remove deletes the file or folder at p and returns the files removed, with their blobs.
	Remove(p string) (map[string]plumbing.Hash, error)
	// WriteDir adds the folder dir as edited to the objects Commit writes, and returns its
	// object name.
	WriteDir(dir string) (plumbing.Hash, error)
	// Reserve makes room for about n new objects, a hint for a large change.
	Reserve(n int)
	// Release drops a folder written by WriteDir from memory (only its object name stays):
	// nothing below it may be read or changed afterwards.
	Release(dir string)
	// Forget drops a folder from memory in a tree that only plans: it reads again as the
	// repository has it. It does nothing in a tree that will be committed.
	Forget(dir string)
	// Commit writes the tree and a commit of it on top of parent into the repository.
	Commit(parent plumbing.Hash, message string, sig object.Signature) (plumbing.Hash, error)
	// Discard drops the objects collected for a commit that is not made (and the temporary
	// pack they were streamed into).
	Discard()
}

// tree is a tree a plan reads and edits.
type tree interface {
	treeReader
	treeWriter
}

var _ tree = (*gitrepo.Tree)(nil)

// ErrConflict means the branch moved while fleetform was writing: someone else wrote in
// between. The caller re-reads, re-plans and tries again. It is the git plumbing's
// gitrepo.ErrConflict (the same error, so errors.Is matches either).
var ErrConflict = gitrepo.ErrConflict

// Credentials choose the credential for a repository URL: nil for none (gitauth.Store).
// The git plumbing uses them; the alias keeps Options.Credentials as it was.
type Credentials = gitrepo.Credentials
