// Package gitops writes an environment's rendered tree to the platform GitOps repository:
// it plans exactly which files change, enforces what fleetform owns and the mass-deletion
// guard, and writes the change as one commit, made again on the new tip when someone else
// wrote in between (gitrepo.Retry).
//
// Read it in this order: apply.go (Writer: Plan, Apply) and files.go (WriteFiles, the one
// writer of control-plane files), plan.go (what a plan says), build.go (how it is built:
// one cluster type at a time), state.go, recorded.go and byworkload.go (the state kept in
// the repository that says what was rendered from which inputs), target.go (where an
// environment is written). The git plumbing it reads and writes through (repository,
// trees, the pack writer, publishing) is package gitrepo.
//
// It drives the renderer (render.Renderer) rather than receiving rendered files, and that
// is what makes a change cheap: which assignments must be rendered again is known only
// from the state this package reads from the branch (the keys recorded for every cluster
// type and workload), and the files of one cluster type are written into the tree and the
// pack before the next is rendered, so that a million assignments never sit in memory at
// once. Rendering first and handing the files over would render every assignment on every
// apply, or move the reading of the state out of the package that owns it.
//
// It imports the stages before it (controlplane, schedule, render) and gitrepo; it must not
// import pipeline, promote, the hub, the application layer (fleet) or the CLI.
package gitops
