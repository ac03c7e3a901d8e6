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

	// ConfigSchemaPolicy says what a composed platform configuration that violates its
	// workload's configSchemas does (fleetform extension). "block" (the default, Kalypso's
	// behaviour): the assignment fails and keeps its previous files. "warn": the assignment
	// still gets its namespace and reconciler, keeps its last valid platform config (none
	// for a new one), and is reported as waiting for platform configuration.
	ConfigSchemaPolicy string `yaml:"configSchemaPolicy,omitempty" json:"configSchemaPolicy,omitempty"`

	// Promotion says where this environment's promotions come from and what they must
	// prove first (fleetform extension). Absent: the environment is first in its chain.
	Promotion *Promotion `yaml:"promotion,omitempty" json:"promotion,omitempty"`

	// FreezeWindows are periods during which nothing is promoted into this environment
	// (fleetform extension).
	FreezeWindows []FreezeWindow `yaml:"freezeWindows,omitempty" json:"freezeWindows,omitempty"`

	// Pins hold a deployment target to a given manifests revision on selected cluster types
	// of this environment, e.g. while a site is frozen (fleetform extension).
	Pins []Pin `yaml:"pins,omitempty" json:"pins,omitempty"`
}

// Promotion is an environment's place in the promotion chain.
type Promotion struct {
	// From is the environment whose verified commits this one receives. Several
	// environments may promote from the same one (rings).
	From string `yaml:"from" json:"from"`
	// MinCompliantPercent of the source environment's clusters must be compliant on every
	// deployment target of its latest desired revision (default 100).
	MinCompliantPercent *int `yaml:"minCompliantPercent,omitempty" json:"minCompliantPercent,omitempty"`
	// Soak is how long the source environment must have been compliant and unchanged
	// (a Go duration such as 30m or 24h; default 0).
	Soak string `yaml:"soak,omitempty" json:"soak,omitempty"`
	// Approval requires a recorded approval (fleetform approve) for the commit.
	Approval bool `yaml:"approval,omitempty" json:"approval,omitempty"`
	// Approvals asks for several approvals from distinct identities, optionally none of them
	// the author of the change promoted (four-eyes; fleetform extension). It implies Approval.
	Approvals *Approvals `yaml:"approvals,omitempty" json:"approvals,omitempty"`
	// Automatic lets `fleetform promote --watch` promote into this environment as soon as
	// the gates pass.
	Automatic bool `yaml:"automatic,omitempty" json:"automatic,omitempty"`
}

// Approvals is an environment's four-eyes rule.
type Approvals struct {
	// Count is how many approvals from distinct identities a promotion needs (default 1).
	Count int `yaml:"count,omitempty" json:"count,omitempty"`
	// DistinctFromAuthor refuses an approval by the identity that made the change promoted
	// (the author the hub recorded for the commit through the authoring API or the web UI).
	DistinctFromAuthor bool `yaml:"distinctFromAuthor,omitempty" json:"distinctFromAuthor,omitempty"`
}

// FreezeWindow is a period without promotions: either absolute (From and To, RFC 3339) or
// weekly (Weekly, in TimeZone).
type FreezeWindow struct {
	// From and To bound an absolute window (RFC 3339 times).
	From string `yaml:"from,omitempty" json:"from,omitempty"`
	To   string `yaml:"to,omitempty" json:"to,omitempty"`
	// Weekly is a recurring window such as {from: "Fri 16:00", to: "Mon 08:00"}.
	Weekly *WeeklyWindow `yaml:"weekly,omitempty" json:"weekly,omitempty"`
	// TimeZone of a weekly window (IANA name, default UTC).
	TimeZone string `yaml:"timeZone,omitempty" json:"timeZone,omitempty"`
	// Reason is shown when a promotion is refused.
	Reason string `yaml:"reason" json:"reason"`
}

// WeeklyWindow is a weekday and time of day to another ("Fri 16:00" to "Mon 08:00").
type WeeklyWindow struct {
	From string `yaml:"from" json:"from"`
	To   string `yaml:"to" json:"to"`
}

// Pin holds a deployment target's manifests to a revision on some cluster types.
type Pin struct {
	// DeploymentTarget is the deployment target's name (<workload>-<target>).
	DeploymentTarget string `yaml:"deploymentTarget" json:"deploymentTarget"`
	// ClusterTypes selects the cluster types the pin applies to ({} for all).
	ClusterTypes *LabelSelector `yaml:"clusterTypes" json:"clusterTypes"`
	// Manifests are merged over the deployment target's manifests there, e.g.
	// {commit: 1a2b3c4} or {tag: v1.4.2}; an empty value removes the key (branch: "").
	Manifests map[string]string `yaml:"manifests" json:"manifests"`
	// Reason is shown by plan and explain.
	Reason string `yaml:"reason,omitempty" json:"reason,omitempty"`
}

// Policies of EnvironmentSpec.ConfigSchemaPolicy.
const (
	ConfigSchemaBlock = "block"
	ConfigSchemaWarn  = "warn"
)

// Config precedence modes of EnvironmentSpec.ConfigPrecedence.
const (
	PrecedenceLayered = "layered"
	PrecedenceName    = "name"
)
