package v1alpha1

// TypeMeta is the apiVersion and kind of a document.
type TypeMeta struct {
	// APIVersion is scheduler.kalypso.io/v1alpha1 for scheduler kinds and v1 for ConfigMap.
	APIVersion string `yaml:"apiVersion" json:"apiVersion"`
	// Kind is one of the Kind* constants.
	Kind string `yaml:"kind" json:"kind"`
}

// ObjectMeta is the part of Kubernetes object metadata fleetform reads.
//
// Fields a Kubernetes API server adds (uid, resourceVersion, managedFields, ...) are
// accepted and ignored, so that objects exported with `kubectl get -o yaml` still load.
type ObjectMeta struct {
	// Name identifies the object within its kind and environment. Required.
	Name string `yaml:"name" json:"name"`
	// Namespace is ignored: in fleetform the environment plays the role of the namespace.
	Namespace string `yaml:"namespace,omitempty" json:"namespace,omitempty"`
	// Labels drive scheduling and configuration matching.
	Labels map[string]string `yaml:"labels,omitempty" json:"labels,omitempty"`
	// Annotations are kept for tooling and otherwise ignored.
	Annotations map[string]string `yaml:"annotations,omitempty" json:"annotations,omitempty"`

	// Server-populated fields, accepted and ignored.
	GenerateName      string `yaml:"generateName,omitempty" json:"-"`
	UID               string `yaml:"uid,omitempty" json:"-"`
	ResourceVersion   string `yaml:"resourceVersion,omitempty" json:"-"`
	Generation        int64  `yaml:"generation,omitempty" json:"-"`
	CreationTimestamp any    `yaml:"creationTimestamp,omitempty" json:"-"`
	DeletionTimestamp any    `yaml:"deletionTimestamp,omitempty" json:"-"`
	ManagedFields     any    `yaml:"managedFields,omitempty" json:"-"`
	OwnerReferences   any    `yaml:"ownerReferences,omitempty" json:"-"`
	Finalizers        any    `yaml:"finalizers,omitempty" json:"-"`
}

// RepoRef points at a folder of a branch of a git repository.
type RepoRef struct {
	// Repo is the repository URL (https, ssh, file) or a local path.
	Repo string `yaml:"repo" json:"repo"`
	// Branch is the branch to read.
	Branch string `yaml:"branch" json:"branch"`
	// Path is the folder inside the repository; "." or empty means the root.
	Path string `yaml:"path" json:"path"`
}
