// Package v1alpha1 declares the document kinds of a fleetform control plane.
//
// The kinds are Kalypso's (apiVersion scheduler.kalypso.io/v1alpha1) plus the Kubernetes
// ConfigMap (apiVersion v1), so a Kalypso control-plane repository is read unchanged, and
// fleetform's own AccessPolicy (apiVersion fleetform.io/v1alpha1).
// fleetform-only extensions are marked "fleetform extension" in their doc comments.
//
// This package imports only the standard library: it is the vocabulary shared by every stage.
package v1alpha1

// Group is the API group of the scheduler kinds.
const Group = "scheduler.kalypso.io"

// APIVersion is the apiVersion of every scheduler kind.
const APIVersion = Group + "/v1alpha1"

// Kind names, as they appear in the `kind` field.
const (
	KindEnvironment          = "Environment"
	KindClusterType          = "ClusterType"
	KindWorkload             = "Workload"
	KindDeploymentTarget     = "DeploymentTarget"
	KindWorkloadRegistration = "WorkloadRegistration"
	KindSchedulingPolicy     = "SchedulingPolicy"
	KindTemplate             = "Template"
	KindConfigSchema         = "ConfigSchema"
	KindGitOpsRepo           = "GitOpsRepo"
	KindBaseRepo             = "BaseRepo"
	KindConfigMap            = "ConfigMap"
)

// Well-known label keys.
const (
	// LabelPlatformConfig marks a ConfigMap as a source of platform configuration when its
	// value is exactly "true".
	LabelPlatformConfig = "platform-config"
	// LabelWorkload names the workload of a deployment target.
	LabelWorkload = "workload"
	// LabelWorkspace names the workspace (team) of a deployment target.
	LabelWorkspace = "workspace"
	// LabelFluxName and LabelFluxNamespace are the labels Flux puts on the objects a
	// Kustomization applies. Kalypso applies a registered Workload with the Kustomization
	// <environment>-<registration> in flux-system, so its deployment targets carry both.
	LabelFluxName      = "kustomize.toolkit.fluxcd.io/name"
	LabelFluxNamespace = "kustomize.toolkit.fluxcd.io/namespace"
	// FluxNamespace is the namespace of Kalypso's Flux objects.
	FluxNamespace = "flux-system"
	// LabelClusterType restricts a ConfigMap or ConfigSchema to one cluster type by name.
	LabelClusterType = "cluster-type"
	// LabelDeploymentTarget restricts a ConfigMap or ConfigSchema to one deployment target by name.
	LabelDeploymentTarget = "deployment-target"
)
