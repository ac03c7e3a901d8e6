// Package pipeline holds fleetform's use cases: load and schedule an environment, render it
// into a folder, plan and apply it to its GitOps repository (with a pull request and the
// desired state posted to the hub), and apply after a promotion. The CLI, `fleetform serve`
// and the tests call these, so that each is implemented once; the CLI keeps only flags,
// validation and printing.
package pipeline
