package v1alpha1

// Environment declares a stage of the promotion chain (dev, stage, prod, or a ring).
//
// It is always read at the tip of the control plane, never at a promoted pin: in the Kalypso
// layout from `.environments/*.yaml` on the main branch, in the folder layout from
// `environments/<name>/`.
type Environment struct {
	TypeMeta `yaml:",inline" json:",inline"`
	Metadata ObjectMeta      `yaml:"metadata" json:"metadata"`
	Spec     EnvironmentSpec `yaml:"spec" json:"spec"`
	Status   any             `yaml:"status,omitempty" json:"-"`
}

// EnvironmentSpec is where an environment's own content lives and how it is composed.
type EnvironmentSpec struct {
	// ControlPlane is the branch (Kalypso layout) holding the environment's cluster types,
	// policies, config maps, GitOps repo and base-repo pin. Branch defaults to the
	// environment name; Repo defaults to the control-plane repository itself.
	ControlPlane RepoRef `yaml:"controlPlane" json:"controlPlane"`

	// ConfigPrecedence chooses how platform ConfigMaps override each other (fleetform
	// extension). "layered" (the default): environment-wide < label-matched < cluster-type <
	// workload < deployment-target, name order within a level. "name": Kalypso's rule, the
	// ConfigMap whose name sorts last wins regardless of what it targets.
	ConfigPrecedence string `yaml:"configPrecedence,omitempty" json:"configPrecedence,omitempty"`
}

// Config precedence modes of EnvironmentSpec.ConfigPrecedence.
const (
	PrecedenceLayered = "layered"
	PrecedenceName    = "name"
)
