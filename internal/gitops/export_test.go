package gitops

import "github.com/fleetform/fleetform/internal/gitops/gitrepo"

// LockTemporaryFiles holds the writers' lock of a repository's objects/fleetform-tmp as a
// writer at work does, until the returned function is called.
func LockTemporaryFiles(dir string) (func(), error) { return gitrepo.LockTemporaryFiles(dir) }

// TemporaryDir is the folder, under objects/, of the pack writer's temporary files.
const TemporaryDir = gitrepo.TemporaryDir
