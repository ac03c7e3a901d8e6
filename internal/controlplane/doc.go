// Package controlplane loads a control plane into a Snapshot per environment: the
// environment's own documents read at the tip, the common (promotable) documents read at
// the commit its BaseRepo pins, and the Workloads of its WorkloadRegistrations, in the
// Kalypso layout (a branch per environment) or the folder layout (environments/<env>/).
//
// It owns reading repositories (directories, local git repositories, remote URLs fetched
// into memory, a RepoMap of URLs to local paths), Flux's .sourceignore rules, strict YAML
// decoding with positions, and the checks that need no other stage: names, duplicates,
// Kalypso's Workload unfolding. Problems are Diagnostics with file and line; a document
// with errors is left out and everything else loads.
//
// Lines: every diagnostic about a document's content has a line (1-based). Line 0 means
// the problem concerns a whole file or folder (an unreadable file, an invalid environment
// folder name), where there is no line to point at.
//
// It imports api/v1alpha1, go-git and YAML libraries; it must not import the later stages
// (schedule, compose, render, gitops) or the CLI.
package controlplane
