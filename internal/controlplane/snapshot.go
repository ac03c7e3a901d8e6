package controlplane

import (
	"fmt"

	"github.com/fleetform/fleetform/api/v1alpha1"
)

// Snapshot is everything one environment is rendered from: its own objects read at the tip,
// the common (promotable) objects read at the pinned commit, and the registered workloads.
// It is a value: later stages read it and never change it.
type Snapshot struct {
	// Environment is the environment name.
	Environment string
	// EnvironmentObject is the Environment document, when there is one.
	EnvironmentObject *Environment
	// DeclaredEnvironments are the names of every environment the control plane declares,
	// sorted.
	DeclaredEnvironments []string

	ClusterTypes       []*ClusterType
	SchedulingPolicies []*SchedulingPolicy
	Templates          []*Template
	ConfigMaps         []*ConfigMap
	ConfigSchemas      []*ConfigSchema
	Registrations      []*WorkloadRegistration
	Workloads          []*Workload
	// DeploymentTargets are unfolded from Workloads and read from DeploymentTarget
	// documents, for every environment (scheduling keeps only this one's).
	DeploymentTargets []*DeploymentTarget
	GitOpsRepo        *GitOpsRepo
	// BaseRepo is the BaseRepo named main: it pins the common content.
	BaseRepo *BaseRepo
	// ExtraBaseRepos are the environment's other BaseRepos, sorted by name: each brings
	// more common content from its own repository (as every BaseRepo does in Kalypso).
	ExtraBaseRepos []*BaseRepo
	// AccessPolicies say who may change what; read from the common part only.
	AccessPolicies []*AccessPolicy
	// BaseRevisions are the commits the ExtraBaseRepos were read at, by name ("" for a
	// directory).
	BaseRevisions map[string]string

	// Revisions records which commits the content was read at.
	Revisions Revisions
	// FailedSources lists the workload sources that could not be read at all
	// (unreachable repositories, unreadable files): their deployment targets are unknown,
	// so what was rendered for them before must be kept.
	FailedSources []string
	// Broken are the control-plane documents that failed to load and may carry
	// configuration. Every assignment one of them could apply to must not be rendered
	// (its previous files are kept) until it is fixed: rendering without its values could
	// ship the wrong configuration.
	Broken []Broken
	// Diagnostics are the problems found while loading; objects with errors are left out.
	Diagnostics []Diagnostic
	// Inputs are the trees the load read, sorted (see ControlPlane.SameInputs).
	Inputs []InputTree
}

// Broken is a document that failed to load and may carry configuration.
type Broken struct {
	// Kind is ConfigMap or ConfigSchema, or "" when the document could not be read at all.
	Kind string
	Name string
	// Labels are the document's labels; they are known only when LabelsKnown is set.
	// A broken document with unknown labels may apply to any assignment.
	Labels      map[string]string
	LabelsKnown bool
	Source      Source
}

// Describe names the broken document for messages.
func (b Broken) Describe() string {
	what := "an unreadable document"
	if b.Kind != "" {
		what = b.Kind + " " + b.Name
	}
	return fmt.Sprintf("%s (%s)", what, where(b.Source))
}

// Revisions are the commits a Snapshot was read at. Empty for plain directories.
type Revisions struct {
	// Environment is the commit of the environment's own content (the tip).
	Environment string `json:"environment,omitempty"`
	// Common is the commit of the common content: the pin, or the tip when unpinned.
	Common string `json:"common,omitempty"`
	// Pinned tells whether Common came from a BaseRepo pin.
	Pinned bool `json:"pinned"`
}

// Precedence returns the configured config precedence mode.
func (s *Snapshot) Precedence() string {
	if s.EnvironmentObject != nil && s.EnvironmentObject.Spec.ConfigPrecedence != "" {
		return s.EnvironmentObject.Spec.ConfigPrecedence
	}
	return v1alpha1.PrecedenceLayered
}

// Environment is a loaded Environment document.
type Environment struct {
	*v1alpha1.Environment
	Source Source
}

// ClusterType is a loaded ClusterType document.
type ClusterType struct {
	*v1alpha1.ClusterType
	Source Source
}

// SchedulingPolicy is a loaded SchedulingPolicy document.
type SchedulingPolicy struct {
	*v1alpha1.SchedulingPolicy
	Source Source
}

// Template is a loaded Template document.
type Template struct {
	*v1alpha1.Template
	Source Source
}

// ConfigMap is a loaded ConfigMap document.
type ConfigMap struct {
	*v1alpha1.ConfigMap
	Source Source
}

// ConfigSchema is a loaded ConfigSchema document.
type ConfigSchema struct {
	*v1alpha1.ConfigSchema
	Source Source
}

// AccessPolicy is a loaded AccessPolicy and its source.
type AccessPolicy struct {
	*v1alpha1.AccessPolicy
	Source Source
}

// WorkloadRegistration is a loaded WorkloadRegistration document.
type WorkloadRegistration struct {
	*v1alpha1.WorkloadRegistration
	Source Source
}

// Workload is a loaded Workload document with the workspace it belongs to.
type Workload struct {
	*v1alpha1.Workload
	Source Source
	// Workspace is the registration's workspace, or the workload's own `workspace` label
	// when it is written inline in the control plane.
	Workspace string
	// Registration is the name of the WorkloadRegistration that brought it, or "".
	Registration string
}

// GitOpsRepo is a loaded GitOpsRepo document.
type GitOpsRepo struct {
	*v1alpha1.GitOpsRepo
	Source Source
}

// BaseRepo is a loaded BaseRepo document.
type BaseRepo struct {
	*v1alpha1.BaseRepo
	Source Source
}

// SchemaRef is a JSON Schema text and where it was written.
type SchemaRef struct {
	Text   string
	Source Source
	// Path is the field path of the schema inside its document.
	Path string
}

// DeploymentTarget is a workload's target in one environment, with its final labels.
type DeploymentTarget struct {
	// Name is <workload>-<target> for targets unfolded from a Workload.
	Name string
	// Labels are the target's labels, then the workload's, then workload and workspace.
	Labels      map[string]string
	Environment string
	Manifests   map[string]string
	// Namespace is the namespace declared for the target on every cluster type, or "" (the
	// scheduler's <environment>-<clusterType>-<target>).
	Namespace string
	// ConfigSchemas are the target's schemas followed by the workload's.
	ConfigSchemas []SchemaRef
	Workload      string
	Workspace     string
	// Registration names the WorkloadRegistration the target came from, or "".
	Registration string
	// Source locates the target (the deploymentTargets entry of its Workload).
	Source Source
	// Path is the field path of the target inside its document.
	Path string
}
