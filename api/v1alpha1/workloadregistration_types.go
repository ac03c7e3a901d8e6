package v1alpha1

// WorkloadRegistration brings the Workloads kept in an application team's repository into
// the control plane, under the team's workspace.
type WorkloadRegistration struct {
	TypeMeta `yaml:",inline" json:",inline"`
	Metadata ObjectMeta               `yaml:"metadata" json:"metadata"`
	Spec     WorkloadRegistrationSpec `yaml:"spec" json:"spec"`
	Status   any                      `yaml:"status,omitempty" json:"-"`
}

// WorkloadRegistrationSpec is where the workloads are and which workspace owns them.
type WorkloadRegistrationSpec struct {
	// Workload is the repository, branch and folder holding Workload documents.
	Workload RepoRef `yaml:"workload" json:"workload"`
	// Workspace is set as the `workspace` label of every deployment target registered here.
	Workspace string `yaml:"workspace,omitempty" json:"workspace,omitempty"`
}
