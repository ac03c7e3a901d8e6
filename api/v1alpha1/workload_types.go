package v1alpha1

// Workload is an application, service or model owned by an application team, with the
// places (deployment targets) it is meant to run in each environment.
type Workload struct {
	TypeMeta `yaml:",inline" json:",inline"`
	Metadata ObjectMeta   `yaml:"metadata" json:"metadata"`
	Spec     WorkloadSpec `yaml:"spec" json:"spec"`
	Status   any          `yaml:"status,omitempty" json:"-"`
}

// WorkloadSpec lists the workload's deployment targets.
type WorkloadSpec struct {
	// ConfigSchemas are JSON Schemas (JSON or YAML text) every deployment target's composed
	// configuration must satisfy.
	ConfigSchemas []string `yaml:"configSchemas,omitempty" json:"configSchemas,omitempty"`
	// DeploymentTargets unfold into DeploymentTargets named <workload>-<name>.
	DeploymentTargets []WorkloadTarget `yaml:"deploymentTargets" json:"deploymentTargets"`
}

// WorkloadTarget is one deployment target as written inside a Workload.
type WorkloadTarget struct {
	// Name is unique within the workload.
	Name string `yaml:"name" json:"name"`
	// Labels describe the target's needs; scheduling policies select on them.
	Labels map[string]string `yaml:"labels,omitempty" json:"labels,omitempty"`
	// Environment is the environment this target belongs to; it is scheduled only there.
	Environment string `yaml:"environment" json:"environment"`
	// Manifests says where the target's manifests are (repo, branch, path, and any other
	// keys templates read as .Manifests.<key>).
	Manifests map[string]string `yaml:"manifests" json:"manifests"`
	// ConfigSchemas apply to this target only, after the workload's.
	ConfigSchemas []string `yaml:"configSchemas,omitempty" json:"configSchemas,omitempty"`
	// Namespace is the namespace the target runs in on every cluster type (a fleetform
	// extension; default: <environment>-<clusterType>-<target>, as Kalypso names it). The
	// application flow renders the target's charts for it.
	Namespace string `yaml:"namespace,omitempty" json:"namespace,omitempty"`
}
