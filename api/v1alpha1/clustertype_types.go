package v1alpha1

// ClusterType is a group of clusters or hosts that receive the same workloads and
// configuration. Its labels are what scheduling policies and config maps match.
type ClusterType struct {
	TypeMeta `yaml:",inline" json:",inline"`
	Metadata ObjectMeta      `yaml:"metadata" json:"metadata"`
	Spec     ClusterTypeSpec `yaml:"spec" json:"spec"`
	Status   any             `yaml:"status,omitempty" json:"-"`
}

// ClusterTypeSpec names the templates that render each assignment on the cluster type.
// Each value is the name of a Template in the control plane or of a built-in template
// (`builtin/<name>`).
type ClusterTypeSpec struct {
	// Reconciler renders reconciler.yaml (Flux, Argo CD, Ansible, ...).
	Reconciler string `yaml:"reconciler" json:"reconciler"`
	// NamespaceService renders namespace.yaml (the namespace and what comes with it).
	NamespaceService string `yaml:"namespaceService" json:"namespaceService"`
	// ConfigType renders platform-config.yaml, or platform-config.sh when the template's
	// contentType is "sh".
	ConfigType string `yaml:"configType" json:"configType"`
}
