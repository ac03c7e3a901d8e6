package v1alpha1

// GitOpsRepo is where an environment's rendered tree is written: a folder (path) of a
// branch of the platform GitOps repository.
type GitOpsRepo struct {
	TypeMeta `yaml:",inline" json:",inline"`
	Metadata ObjectMeta `yaml:"metadata" json:"metadata"`
	Spec     RepoRef    `yaml:"spec" json:"spec"`
	Status   any        `yaml:"status,omitempty" json:"-"`
}

// BaseRepo pins the commit of the promotable (common) control-plane content an environment
// renders. Kalypso reads only the one named "main".
type BaseRepo struct {
	TypeMeta `yaml:",inline" json:",inline"`
	Metadata ObjectMeta   `yaml:"metadata" json:"metadata"`
	Spec     BaseRepoSpec `yaml:"spec" json:"spec"`
	Status   any          `yaml:"status,omitempty" json:"-"`
}

// BaseRepoSpec is a repository folder at an optional commit.
type BaseRepoSpec struct {
	RepoRef `yaml:",inline" json:",inline"`
	// Commit pins the content; empty means the branch tip.
	Commit string `yaml:"commit,omitempty" json:"commit,omitempty"`
}

// BaseRepoName is the name of the BaseRepo that pins common content.
const BaseRepoName = "main"
