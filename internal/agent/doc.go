// Package agent holds what every fleetform reporter shares: the Sender, which delivers a
// cluster's latest state to the hub over a link that comes and goes, the bounds that keep
// a report small, and the Poster that sends reports through the hub's client.
//
// The reporters themselves live in sub-packages: agent/kube (Flux and Argo CD objects of a
// Kubernetes cluster) and agent/host (Ansible playbooks on a VM). They build hub.Report
// values and hand them to a Sender; the Sender alone talks to the hub.
//
// The package imports internal/hub for its types only; it must not import the reporters.
package agent
