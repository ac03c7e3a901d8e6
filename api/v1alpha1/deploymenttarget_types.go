package v1alpha1

// DeploymentTarget is a workload's place in one environment. fleetform derives them from
// Workloads (as Kalypso's workload controller does); they can also be written directly.
type DeploymentTarget struct {
	TypeMeta `yaml:",inline" json:",inline"`
	Metadata ObjectMeta           `yaml:"metadata" json:"metadata"`
	Spec     DeploymentTargetSpec `yaml:"spec" json:"spec"`
	Status   any                  `yaml:"status,omitempty" json:"-"`
}

// DeploymentTargetSpec is the environment, manifests location and schemas of a target.
type DeploymentTargetSpec struct {
	// Environment is the only environment the target is scheduled in.
	Environment string `yaml:"environment" json:"environment"`
	// Manifests is free-form; templates read it as .Manifests.<key>.
	Manifests map[string]string `yaml:"manifests" json:"manifests"`
	// ConfigSchemas validate the target's composed configuration.
	ConfigSchemas []string `yaml:"configSchemas,omitempty" json:"configSchemas,omitempty"`
	// Namespace is the namespace the target runs in on every cluster type (default:
	// <environment>-<clusterType>-<target>).
	Namespace string `yaml:"namespace,omitempty" json:"namespace,omitempty"`
}
