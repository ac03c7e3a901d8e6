package gitops

import "github.com/fleetform/fleetform/internal/gitops/gitrepo"

// ErrConflict means the branch moved while fleetform was writing: someone else wrote in
// between. The caller re-reads, re-plans and tries again. It is the git plumbing's
// gitrepo.ErrConflict (the same error, so errors.Is matches either).
var ErrConflict = gitrepo.ErrConflict

// Credentials choose the credential for a repository URL: nil for none (gitauth.Store).
// The git plumbing uses them; the alias keeps Options.Credentials as it was.
type Credentials = gitrepo.Credentials
