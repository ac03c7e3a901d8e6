// Package authoring writes the control plane for its users: it adds, changes and removes
// environments, cluster types, workloads and their deployment targets, scheduling policies,
// workload registrations and platform-config values by editing the YAML node trees of the
// control plane's files (comments, key order and the other documents of a file are kept),
// on an in-memory copy first. The whole control plane is then loaded and validated with the
// change, the fleet plan of every environment (assignments gained and lost, config values
// changed) is computed before and after, and only then is the change written into the
// directory, committed (on the environment's branch in the Kalypso layout) or pushed for a
// pull request. It also scaffolds new control planes (Init) and what a new cluster needs
// (ClusterManifests).
//
// The CLI (init, add, set, unset, remove, onboard) and the authoring API of serve use it,
// so that each operation is implemented once. It imports platform, schedule, compose,
// render and the git plumbing; it must not import cli, serve or hub.
package authoring
