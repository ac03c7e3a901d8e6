// Package pipeline runs one environment through fleetform's stages, in order: load (package
// controlplane), schedule, compose and render (Load, Run), and reports what came out: the
// explanations of scheduling and configuration (Run.Explain), a plan's report (Report,
// WriteMarkdown), the desired state the hub is told of (Desired), a render into a folder
// (RenderToDir), an apply to the GitOps repository with its pull request (Apply,
// PullRequests) and the record of the last clean apply (Memos).
//
// It holds no use case: those are package fleet's, which calls these steps. Package
// authoring, a peer of fleet, uses Load to plan a change of the control plane.
package pipeline
