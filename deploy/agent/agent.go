// Package agent holds the Kubernetes reporting agent's manifests (kubectl apply -k
// deploy/agent), embedded so that `fleetform onboard cluster` prints the same objects, with
// the hub, the cluster's name and its token filled in.
package agent

import "embed"

// Manifests are the files of deploy/agent: kustomization.yaml lists the others in order.
//
//go:embed *.yaml
var Manifests embed.FS
