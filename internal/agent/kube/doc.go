// Package kube is the Kubernetes agent: it watches the Flux GitRepository and Kustomization
// objects and the Argo CD Application objects of a cluster with dynamic informers, maps
// them to deployment targets, and hands the cluster's state, as a hub.Report, to a
// consumer (the agent.Sender).
//
// The mapping is pure (Parse and Build, no client); the Watcher adds the informers. The
// package reads the Kubernetes API only: it never writes, and needs only get, list and
// watch on those three resources (deploy/agent holds the RBAC).
package kube
