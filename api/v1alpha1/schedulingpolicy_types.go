package v1alpha1

// SchedulingPolicy assigns the deployment targets it selects to the cluster types it
// selects, in the environment it belongs to.
type SchedulingPolicy struct {
	TypeMeta `yaml:",inline" json:",inline"`
	Metadata ObjectMeta           `yaml:"metadata" json:"metadata"`
	Spec     SchedulingPolicySpec `yaml:"spec" json:"spec"`
	Status   any                  `yaml:"status,omitempty" json:"-"`
}

// SchedulingPolicySpec holds the two selectors.
type SchedulingPolicySpec struct {
	// DeploymentTargetSelector picks deployment targets.
	DeploymentTargetSelector DeploymentTargetSelector `yaml:"deploymentTargetSelector" json:"deploymentTargetSelector"`
	// ClusterTypeSelector picks cluster types.
	ClusterTypeSelector ClusterTypeSelector `yaml:"clusterTypeSelector" json:"clusterTypeSelector"`
}

// DeploymentTargetSelector selects deployment targets by workspace and labels.
type DeploymentTargetSelector struct {
	// Workspace, when set, must equal the target's `workspace` label.
	Workspace string `yaml:"workspace,omitempty" json:"workspace,omitempty"`
	// LabelSelector must match the target's labels. Required; `{}` selects every target.
	LabelSelector *LabelSelector `yaml:"labelSelector" json:"labelSelector"`
}

// ClusterTypeSelector selects cluster types by labels.
type ClusterTypeSelector struct {
	// LabelSelector must match the cluster type's labels. Required; `{}` selects every type.
	LabelSelector *LabelSelector `yaml:"labelSelector" json:"labelSelector"`
}

// LabelSelector is a Kubernetes label selector: every matchLabels pair and every
// matchExpressions requirement must hold.
type LabelSelector struct {
	// MatchLabels requires key=value for each entry.
	MatchLabels map[string]string `yaml:"matchLabels,omitempty" json:"matchLabels,omitempty"`
	// MatchExpressions are set-based requirements.
	MatchExpressions []LabelSelectorRequirement `yaml:"matchExpressions,omitempty" json:"matchExpressions,omitempty"`
}

// LabelSelectorRequirement is one set-based requirement.
type LabelSelectorRequirement struct {
	// Key is the label key.
	Key string `yaml:"key" json:"key"`
	// Operator is In, NotIn, Exists or DoesNotExist.
	Operator string `yaml:"operator" json:"operator"`
	// Values is required (non-empty) for In and NotIn and must be empty otherwise.
	Values []string `yaml:"values,omitempty" json:"values,omitempty"`
}
