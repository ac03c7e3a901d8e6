package api

import (
	"time"

	"github.com/fleetform/fleetform/internal/hub"
)

// The request and response bodies of the API that are not hub types. Requests are decoded
// strictly: an unknown field is a 400.

// ClusterRegistration is the body of POST /api/v1/clusters.
type ClusterRegistration struct {
	Name        string            `json:"name"`
	Environment string            `json:"environment"`
	ClusterType string            `json:"clusterType"`
	Labels      map[string]string `json:"labels,omitempty"`
	// ExpiresAt is when the cluster's new token stops working (default: never).
	ExpiresAt *time.Time `json:"expiresAt,omitempty"`
}

// ClusterBatch is the body of POST /api/v1/clusters/batch: many registrations in one
// transaction (a simulator, an import); any conflict fails the whole batch.
type ClusterBatch struct {
	Clusters []ClusterRegistration `json:"clusters"`
}

// IssuedTokens answers POST /api/v1/clusters/batch: the tokens, in the order of the request.
type IssuedTokens struct {
	Clusters []IssuedToken `json:"clusters"`
}

// TokenRequest is the body of POST /api/v1/tokens: a label for the token, its kind and
// when it expires.
type TokenRequest struct {
	Name string `json:"name"`
	// Kind is read (the default) or admin.
	Kind string `json:"kind,omitempty"`
	// ExpiresAt is when the token stops working (default: never).
	ExpiresAt *time.Time `json:"expiresAt,omitempty"`
}

// RotateRequest is the (optional) body of POST /api/v1/tokens/{id}/rotate.
type RotateRequest struct {
	// ExpiresAt is when the new token stops working (default: never).
	ExpiresAt *time.Time `json:"expiresAt,omitempty"`
}

// IssuedToken answers POST /api/v1/clusters (the cluster's token), POST /api/v1/tokens and
// POST /api/v1/tokens/{id}/rotate. The token is shown once; the hub keeps only its hash.
type IssuedToken struct {
	// Name is the cluster's name for a cluster token, else the token's label.
	Name  string `json:"name"`
	Token string `json:"token"`
	// ID names the token in GET /api/v1/tokens and DELETE /api/v1/tokens/{id}.
	ID        string     `json:"id,omitempty"`
	ExpiresAt *time.Time `json:"expiresAt,omitempty"`
}

// TokenList answers GET /api/v1/tokens: every token but its secret.
type TokenList struct {
	Tokens []hub.TokenInfo `json:"tokens"`
}

// DesiredAccepted answers POST /api/v1/desired (201, also when the same revision was
// already posted with the same assignments).
type DesiredAccepted struct {
	Environment string `json:"environment"`
	Revision    string `json:"revision"`
	Assignments int    `json:"assignments"`
}

// ReportAccepted answers POST /api/v1/reports (202): the report is durable.
type ReportAccepted struct {
	Cluster  string `json:"cluster"`
	Accepted bool   `json:"accepted"`
}

// ReportBatch is the body of POST /api/v1/reports/batch: reports of many clusters, each
// with its cluster's own token (a relay forwards them as the clusters sent them).
type ReportBatch struct {
	Reports []SignedReport `json:"reports"`
}

// SignedReport is one report of a batch and the token of the cluster it is for.
type SignedReport struct {
	Token  string     `json:"token"`
	Report hub.Report `json:"report"`
}

// ReportResults answers POST /api/v1/reports/batch (200): one result per report, in the
// order of the request.
type ReportResults struct {
	Results []ReportResult `json:"results"`
}

// ReportResult is what POST /api/v1/reports would have answered for one report of a batch:
// accepted (durable), or the status, code and message of its error.
type ReportResult struct {
	Cluster  string `json:"cluster"`
	Accepted bool   `json:"accepted"`
	Status   int    `json:"status"`
	Code     string `json:"code,omitempty"`
	Error    string `json:"error,omitempty"`
}

// Approval is the body of POST /api/v1/approvals and what it answers (201).
type Approval struct {
	Environment string `json:"environment"`
	Commit      string `json:"commit"`
	By          string `json:"by"`
}

// MassDeletion is the body of POST /api/v1/environments/{env}/mass-deletion: a confirmation
// that the mass deletion the environment's sync refused at the control-plane commit is
// intended, and why.
type MassDeletion struct {
	Commit string `json:"commit"`
	Reason string `json:"reason"`
}

// ApprovalList answers GET /api/v1/approvals?environment=ENV, newest first.
type ApprovalList struct {
	Environment string      `json:"environment"`
	Approvals   []hub.Event `json:"approvals"`
}

// EnvironmentList answers GET /api/v1/environments.
type EnvironmentList struct {
	Environments []string `json:"environments"`
}

// HistoryList answers GET /api/v1/history, newest first.
type HistoryList struct {
	Events []hub.Event `json:"events"`
	// Summary folds the events per environment, revision and kind (fleetform history fills it).
	Summary []hub.RevisionSummary `json:"summary,omitempty"`
	// Truncated is set when --limit cut the history: older events matched too.
	Truncated bool `json:"truncated,omitempty"`
}

// SourceList answers GET /api/v1/sources: the git sources fleetform serve polls, by URL and
// branch.
type SourceList struct {
	Sources []hub.SourceState `json:"sources"`
}
