package hub

import (
	"encoding/json"
	"time"
)

// ClusterStatus is a cluster's overall state in a report.
type ClusterStatus string

// Cluster statuses.
const (
	Compliant    ClusterStatus = "Compliant"
	NonCompliant ClusterStatus = "NonCompliant"
	Progressing  ClusterStatus = "Progressing"
)

// DeploymentStatus is one deployment target's state in a report.
type DeploymentStatus string

// Deployment statuses.
const (
	Ready              DeploymentStatus = "Ready"
	Failed             DeploymentStatus = "Failed"
	DeploymentProgress DeploymentStatus = "Progressing"
)

// State is how a cluster counts for a deployment target in a rollout.
type State string

// Rollout states.
const (
	StateCompliant   State = "compliant"
	StateFailed      State = "failed"
	StateProgressing State = "progressing"
	StateUnknown     State = "unknown"
)

// Cluster is a registered cluster or host.
type Cluster struct {
	Name         string            `json:"name"`
	Environment  string            `json:"environment"`
	ClusterType  string            `json:"clusterType"`
	Labels       map[string]string `json:"labels"`
	RegisteredAt time.Time         `json:"registeredAt"`
}

// Report is what a cluster's reporter posts.
type Report struct {
	Cluster     string             `json:"cluster"`
	Revision    string             `json:"revision"`
	Status      ClusterStatus      `json:"status"`
	Message     string             `json:"message"`
	ObservedAt  time.Time          `json:"observedAt"`
	Deployments []DeploymentReport `json:"deployments"`
	// GitOpsPath is the folder of the GitOps repository the cluster reconciles (fleetform
	// extension), so that the hub can flag a cluster reconciling another type's folder.
	GitOpsPath string `json:"gitopsPath,omitempty"`
}

// DeploymentReport is one deployment target's state in a report.
type DeploymentReport struct {
	DeploymentTarget string           `json:"deploymentTarget"`
	Namespace        string           `json:"namespace"`
	Status           DeploymentStatus `json:"status"`
	Revision         string           `json:"revision"`
}

// Desired is what fleetform scheduled for an environment at a GitOps revision.
type Desired struct {
	Environment string `json:"environment"`
	Revision    string `json:"revision"`
	GitOpsRepo  string `json:"gitopsRepo"`
	Branch      string `json:"branch"`
	// PromotedCommit is the control-plane commit whose common content was rendered
	// (fleetform extension), so that promotion can tell what the fleet verified.
	PromotedCommit string              `json:"promotedCommit,omitempty"`
	Assignments    []DesiredAssignment `json:"assignments"`
	// PostedAt is when the hub received it.
	PostedAt time.Time `json:"postedAt"`
}

// DesiredAssignment is one scheduled assignment.
type DesiredAssignment struct {
	Workload         string            `json:"workload"`
	DeploymentTarget string            `json:"deploymentTarget"`
	ClusterType      string            `json:"clusterType"`
	Namespace        string            `json:"namespace"`
	Manifests        map[string]string `json:"manifests"`
	// Config is the composed configuration (fleetform extension), for environment diffs.
	Config map[string]any `json:"config,omitempty"`
	// Waiting lists why the assignment waits for platform configuration (its environment's
	// configSchemaPolicy is warn and its composed configuration breaks the workload's
	// schema: the missing or invalid keys); fleetform extension.
	Waiting []string `json:"waiting,omitempty"`
}

// WorkloadVersion is what application CI reports for a deployment target (Kalypso's
// deployment descriptor).
type WorkloadVersion struct {
	Environment      string    `json:"environment"`
	Workload         string    `json:"workload"`
	DeploymentTarget string    `json:"deploymentTarget"`
	Version          string    `json:"version"`
	Build            string    `json:"build,omitempty"`
	SourceCommit     string    `json:"sourceCommit,omitempty"`
	ReportedAt       time.Time `json:"reportedAt"`
}

// Rollout is how far an environment's latest desired revision has reached.
type Rollout struct {
	Environment string          `json:"environment"`
	Revision    string          `json:"revision"`
	Targets     []TargetRollout `json:"targets"`
}

// TargetRollout counts the clusters of a target's cluster type by state.
type TargetRollout struct {
	Workload         string `json:"workload"`
	DeploymentTarget string `json:"deploymentTarget"`
	ClusterType      string `json:"clusterType"`
	Clusters         int    `json:"clusters"`
	Compliant        int    `json:"compliant"`
	Failed           int    `json:"failed"`
	Progressing      int    `json:"progressing"`
	Unknown          int    `json:"unknown"`
	// Version is the version application CI last posted for the target (POST
	// /api/v1/versions, fleetform app apply --hub); empty when none.
	Version string `json:"version,omitempty"`
}

// ClusterRecord is a cluster with its latest accepted report.
type ClusterRecord struct {
	Cluster
	TokenHash []byte `json:"-"`
	// Reported is set once a report has been accepted.
	Reported   bool          `json:"reported"`
	Revision   string        `json:"revision"`
	Status     ClusterStatus `json:"status"`
	Message    string        `json:"message"`
	ObservedAt time.Time     `json:"observedAt"`
	ReceivedAt time.Time     `json:"receivedAt"`
	GitOpsPath string        `json:"gitopsPath,omitempty"`
	// Fresh is set while the cluster counts in the rollout counters (its latest report is
	// newer than the staleness limit).
	Fresh bool `json:"fresh"`
	// Digest identifies the latest report's content (revision, statuses, deployments): a
	// report with the same digest only refreshes the times.
	Digest string `json:"-"`
}

// DeploymentState is a deployment target's latest state on a cluster.
type DeploymentState struct {
	DeploymentTarget string           `json:"deploymentTarget"`
	Namespace        string           `json:"namespace"`
	Status           DeploymentStatus `json:"status"`
	Revision         string           `json:"revision"`
	Since            time.Time        `json:"since"`
}

// Event is one entry of the history: a desired revision, a status transition, or a write
// made by someone (then Actor says who, and why it was allowed).
type Event struct {
	ID               int64     `json:"id"`
	Time             time.Time `json:"time"`
	Kind             string    `json:"kind"` // desired, cluster, deployment, registration, promotion, approval, authoring, override, token, signin
	Environment      string    `json:"environment"`
	ClusterType      string    `json:"clusterType,omitempty"`
	Cluster          string    `json:"cluster,omitempty"`
	Workload         string    `json:"workload,omitempty"`
	DeploymentTarget string    `json:"deploymentTarget,omitempty"`
	Revision         string    `json:"revision,omitempty"`
	From             string    `json:"from,omitempty"`
	To               string    `json:"to,omitempty"`
	Message          string    `json:"message,omitempty"`
	// Actor is who made the write and the access decision's reason (absent for what the
	// fleet reports, and for writes recorded before the hub recorded actors).
	Actor *Actor `json:"actor,omitempty"`
}

// Event kinds.
const (
	EventDesired      = "desired"
	EventCluster      = "cluster"
	EventDeployment   = "deployment"
	EventRegistration = "registration"
	EventPromotion    = "promotion"
	EventApproval     = "approval"
	// EventAuthoring is a change of the control plane made through the authoring API: its
	// commit (or pull request head) and, in the message, who made it and what it did.
	EventAuthoring = "authoring"
	// EventOverride is a promotion made despite unmet gates, with the reason given.
	EventOverride = "override"
	// EventToken is a hub token created, rotated or revoked.
	EventToken = "token"
	// EventSignIn is a sign-in that failed.
	EventSignIn = "signin"
)

// HistoryFilter selects history events; empty fields match everything.
type HistoryFilter struct {
	Environment string
	Workload    string
	ClusterType string
	Cluster     string
	// Kind is one kind, or several separated by commas ("authoring,approval").
	Kind string
	// Actor matches the actor's subject, email, name or token name (case-insensitive).
	Actor string
	// Group matches one of the actor's groups, or a role that allowed the write.
	Group string
	// Revision matches the event's revision (a promoted or authored commit).
	Revision string
	Since    time.Time
	// Limit bounds the number of events (newest first); 0 means the default.
	Limit int
}

// Token kinds.
const (
	TokenAdmin   = "admin"
	TokenRead    = "read"
	TokenCluster = "cluster"
	// TokenRelay may only forward reports in batches, each with its cluster's own token.
	TokenRelay = "relay"
)

// Token sources: where an admin token came from ("" for tokens issued through the API).
const (
	SourceConfigured = "configured" // FLEETFORM_HUB_ADMIN_TOKEN
	SourceGenerated  = "generated"  // generated on the first start
)

// Token is an API credential, stored hashed.
type Token struct {
	// ID names the token in listings and revocations: TokenID of its hash.
	ID        string
	Hash      []byte
	Kind      string
	Cluster   string // for cluster tokens
	Name      string // a label for admin and read tokens
	Source    string // SourceConfigured, SourceGenerated or ""
	CreatedAt time.Time
	// ExpiresAt is when the token stops working (zero: never).
	ExpiresAt time.Time
	// RevokedAt is when the token was revoked (zero: it was not).
	RevokedAt time.Time
	// Session is what a session token stands for (SessionOf, as JSON); "" for other kinds.
	Session string
}

// Token states, as listings show them.
const (
	TokenActive  = "active"
	TokenExpired = "expired"
	TokenRevoked = "revoked"
)

// State is the token's state at now: active, expired or revoked.
func (t Token) State(now time.Time) string {
	switch {
	case !t.RevokedAt.IsZero():
		return TokenRevoked
	case !t.ExpiresAt.IsZero() && !now.Before(t.ExpiresAt):
		return TokenExpired
	}
	return TokenActive
}

// TokenFilter selects tokens; empty fields match everything.
type TokenFilter struct {
	Kind    string
	Cluster string
}

// TokenInfo is a token as listings show it: everything but its secret and its hash.
type TokenInfo struct {
	ID        string     `json:"id"`
	Kind      string     `json:"kind"`
	Name      string     `json:"name,omitempty"`
	Cluster   string     `json:"cluster,omitempty"`
	Source    string     `json:"source,omitempty"`
	CreatedAt time.Time  `json:"createdAt"`
	ExpiresAt *time.Time `json:"expiresAt,omitempty"`
	RevokedAt *time.Time `json:"revokedAt,omitempty"`
	// State is active, expired or revoked, at the hub's time of the answer.
	State string `json:"state"`
}

// Info is the token as listings show it, at now.
func (t Token) Info(now time.Time) TokenInfo {
	return TokenInfo{ID: t.ID, Kind: t.Kind, Name: t.Name, Cluster: t.Cluster, Source: t.Source, CreatedAt: t.CreatedAt,
		ExpiresAt: timeOrNil(t.ExpiresAt), RevokedAt: timeOrNil(t.RevokedAt), State: t.State(now)}
}

func timeOrNil(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}

// EncodeWaiting is how stores keep DesiredAssignment.Waiting: "" for none, else JSON.
func EncodeWaiting(w []string) (string, error) {
	if len(w) == 0 {
		return "", nil
	}
	b, err := json.Marshal(w)
	return string(b), err
}

// DecodeWaiting reads what EncodeWaiting wrote.
func DecodeWaiting(s string) ([]string, error) {
	if s == "" {
		return nil, nil
	}
	var w []string
	return w, json.Unmarshal([]byte(s), &w)
}
