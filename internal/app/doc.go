// Package app is the application team's flow: it reads an application's source repository
// (workload.yaml, a Helm chart or a kustomize base, a values schema, fleetform-app.yaml) and
// its config repository (Kalypso's branch per environment, or a folder per environment),
// composes each deployment target's values by a deep merge that keeps every value's
// provenance, substitutes only the variables the flow defines, validates the values against the
// schema, renders the chart with the Helm SDK (client-only) and writes each target's folder
// of the app GitOps repository: only the targets whose inputs changed, one commit per
// branch, or a pull request that re-runs update. It also decides application promotions
// with the platform's gates.
//
// It uses gitops/gitrepo for git, forge for pull requests and promote for the gate
// sentences; it must not import cli, pipeline or the platform's render and compose.
package app
