package v1alpha1

// FleetformGroup is the API group of fleetform's own kinds (fleetform extension).
const FleetformGroup = "fleetform.io"

// FleetformAPIVersion is the apiVersion of fleetform's own kinds.
const FleetformAPIVersion = FleetformGroup + "/v1alpha1"

// KindAccessPolicy is the kind of an AccessPolicy.
const KindAccessPolicy = "AccessPolicy"

// Actions an AccessPolicy allows.
const (
	// ActionAuthor changes the control plane: a workspace's registrations, workloads and
	// deployment targets, or (Platform) everything else.
	ActionAuthor = "author"
	// ActionPromote promotes into environments (an app promotion: of a workspace's workloads).
	ActionPromote = "promote"
	// ActionApprove approves a promotion into environments.
	ActionApprove = "approve"
	// ActionOverride overrides a promotion's gates, with a reason.
	ActionOverride = "override"
	// ActionTokens administers the hub's tokens.
	ActionTokens = "tokens"
)

// AccessPolicy says who may change what (fleetform extension, apiVersion fleetform.io/v1alpha1):
// roles, each granted to subjects and allowing actions in a scope. It is kept in the
// control plane's common part and promoted like the rest. Everyone signed in may read.
type AccessPolicy struct {
	TypeMeta `yaml:",inline" json:",inline"`
	Metadata ObjectMeta       `yaml:"metadata" json:"metadata"`
	Spec     AccessPolicySpec `yaml:"spec" json:"spec"`
	Status   any              `yaml:"status,omitempty" json:"-"`
}

// AccessPolicySpec holds the roles.
type AccessPolicySpec struct {
	Roles []AccessRole `yaml:"roles" json:"roles"`
}

// AccessRole is granted to every identity any of its subjects matches.
type AccessRole struct {
	// Name names the role in decisions and the audit history.
	Name     string          `yaml:"name" json:"name"`
	Subjects []AccessSubject `yaml:"subjects" json:"subjects"`
	Allow    []AccessRule    `yaml:"allow" json:"allow"`
}

// AccessSubject matches identities by exactly one of its fields.
type AccessSubject struct {
	// Group is a value of the identity provider's groups claim.
	Group string `yaml:"group,omitempty" json:"group,omitempty"`
	// User is a signed-in person's email, or else their subject.
	User string `yaml:"user,omitempty" json:"user,omitempty"`
	// Token is a hub token's name.
	Token string `yaml:"token,omitempty" json:"token,omitempty"`
	// Claim matches a token from a trusted issuer (a CI job's) whose claims hold every
	// value given (repository, ref, environment, ...); "iss" names the issuer.
	Claim map[string]string `yaml:"claim,omitempty" json:"claim,omitempty"`
}

// AccessRule allows one action in a scope.
type AccessRule struct {
	// Action is one of the Action* constants.
	Action string `yaml:"action" json:"action"`
	// Workspaces scope author (the workspace's objects) and promote (an app promotion of
	// the workspace's workloads); "*" is every workspace.
	Workspaces []string `yaml:"workspaces,omitempty" json:"workspaces,omitempty"`
	// Environments scope promote, approve and override; "*" is every environment.
	Environments []string `yaml:"environments,omitempty" json:"environments,omitempty"`
	// Platform allows author on the platform's objects: environments, cluster types,
	// scheduling policies, config maps, templates, schemas, GitOps and base repositories, and
	// access policies themselves.
	Platform bool `yaml:"platform,omitempty" json:"platform,omitempty"`
}
