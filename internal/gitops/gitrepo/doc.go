// Package gitrepo is the git plumbing of the GitOps writer: it opens a repository (a local
// one in place, a remote one through a bare clone in a cache, with the credential chosen
// for its URL), reads a branch's tip and, lazily, the trees and blobs of a commit, edits a
// tree in memory, writes the new objects as one pack with its index, and publishes a commit
// with a compare-and-swap on the branch (update-ref locally, a push without force to a
// remote). It also removes the temporary packs interrupted writers left behind.
//
// It knows nothing of environments, rendering or what fleetform owns: that policy is
// package gitops, which uses this one through small interfaces of its own. This package
// must not import gitops, render, schedule or compose.
package gitrepo
