package hub

import "time"

// What fleetform serve keeps in the hub's store, so that every replica (the leader that polls
// and applies, and the followers) answers the same status: the git sources it polls and the
// syncs (applies) of each environment.

// SourceState is what serve knows of one polled git source.
type SourceState struct {
	// URL is the repository as the control plane names it, without credentials (a URL
	// carrying a password, or an http(s) URL carrying a user, is refused).
	URL string `json:"url"`
	// Branch is the ref polled ("" = HEAD).
	Branch string `json:"branch"`
	// Kind is SourceKindControlPlane, SourceKindWorkload or SourceKindBase.
	Kind string `json:"kind"`
	// LastCommit is the commit the latest successful poll found.
	LastCommit string `json:"lastCommit,omitempty"`
	// LastPoll is when the source was last polled, successfully or not.
	LastPoll time.Time `json:"lastPoll,omitzero"`
	// LastSync is the last successful sync of an environment the source affects.
	LastSync time.Time `json:"lastSync,omitzero"`
	// LastError is why the latest poll failed ("" when it succeeded).
	LastError string `json:"lastError,omitempty"`
	// Failures counts the consecutive failed polls.
	Failures int `json:"failures"`
	// NextPoll is when the source is polled next.
	NextPoll time.Time `json:"nextPoll,omitzero"`
}

// Source kinds.
const (
	SourceKindControlPlane = "control-plane"
	SourceKindWorkload     = "workload"
	SourceKindBase         = "base"
)

// SyncRecord is one apply of one environment by serve.
type SyncRecord struct {
	Environment string `json:"environment"`
	// Time is when the apply started (the hub's clock when zero).
	Time time.Time `json:"time"`
	// DurationMS is how long the apply took, in milliseconds.
	DurationMS int64 `json:"durationMs"`
	// ControlPlaneCommit is the control-plane commit applied.
	ControlPlaneCommit string `json:"controlPlaneCommit,omitempty"`
	// CommonCommit is the commit whose common content was rendered (the promoted one).
	CommonCommit string `json:"commonCommit,omitempty"`
	// GitOpsRepo and Branch are where the environment was written (no credentials).
	GitOpsRepo string `json:"gitopsRepo,omitempty"`
	Branch     string `json:"branch,omitempty"`
	// GitOpsCommit is the commit written, or the branch tip found up to date.
	GitOpsCommit string `json:"gitopsCommit,omitempty"`
	// PullRequest is the URL of the pull request opened instead of a commit to the branch.
	PullRequest string `json:"pullRequest,omitempty"`
	// NoChange is set when the branch was up to date: nothing was written.
	NoChange bool `json:"noChange"`
	// FilesChanged counts the files the commit changed.
	FilesChanged int `json:"filesChanged"`
	// Failed are the assignments that could not be rendered (their files were kept).
	Failed []FailedAssignment `json:"failed"`
	// Error is why the apply failed ("" when it succeeded).
	Error string `json:"error,omitempty"`
	// Trigger is what started the apply: TriggerPoll, TriggerWebhook, TriggerAuthoring, TriggerPromotion,
	// TriggerStart, TriggerMassDeletion, TriggerManual or "".
	Trigger string `json:"trigger,omitempty"`
}

// FailedAssignment is an assignment a sync could not render.
type FailedAssignment struct {
	ClusterType      string `json:"clusterType"`
	DeploymentTarget string `json:"deploymentTarget"`
	Error            string `json:"error"`
}

// Sync triggers.
const (
	TriggerPoll      = "poll"
	TriggerWebhook   = "webhook"
	TriggerPromotion = "promotion"
	// TriggerAuthoring is a change made through serve's authoring API or its UI forms.
	TriggerAuthoring = "authoring"
	// TriggerMassDeletion is a confirmation of a mass deletion a sync refused.
	TriggerMassDeletion = "mass-deletion"
	// TriggerManual is an administrator's "sync now" (the web UI).
	TriggerManual = "manual"
	TriggerStart  = "start"
)

// Limits of sources and sync records.
const (
	// MaxSyncHistory is how many syncs the store keeps per environment: recording one more
	// removes the environment's oldest.
	MaxSyncHistory = 100
	// MaxURLLength bounds a source's URL, a sync's GitOps repository and pull request.
	MaxURLLength = 2048
	// MaxRefLength bounds branches and commits.
	MaxRefLength = 1024
	// MaxErrorLength bounds a source's LastError and a sync's Error; each failed
	// assignment's error is bounded by MaxMessageLength.
	MaxErrorLength = 16 << 10
	// MaxFailedAssignments bounds a sync's Failed list.
	MaxFailedAssignments = 1000
)
