package app

import "github.com/fleetform/fleetform/internal/forge"

// Change is one file a run adds, modifies or deletes, by its path in the GitOps repository.
type Change struct {
	Path   string `json:"path"`
	Action string `json:"action"` // add, modify, delete
}

// Target statuses in a Result.
const (
	StatusChanged   = "changed"
	StatusUnchanged = "unchanged"
	StatusFailed    = "failed"
)

// TargetResult is what a run did (or would do) for one deployment target.
type TargetResult struct {
	Target       string   `json:"target"`
	Branch       string   `json:"branch"`
	Path         string   `json:"path"`
	ConfigFolder string   `json:"configFolder,omitempty"`
	Status       string   `json:"status"`
	Error        string   `json:"error,omitempty"`
	Changes      []Change `json:"changes"`
	// Kept are the files whose only difference from what the folder holds came from a
	// random function (a generated password, certificate or name): they keep their bytes.
	Kept []string `json:"kept,omitempty"`
}

// BranchResult is the commit written on one branch of the GitOps repository.
type BranchResult struct {
	// Branch is the branch the targets' manifests go to (the pull request's base with --pr).
	Branch string `json:"branch"`
	// Commit is the commit written ("" when nothing changed).
	Commit string `json:"commit,omitempty"`
	// Head is the pull request's branch with --pr.
	Head        string       `json:"head,omitempty"`
	Targets     []string     `json:"targets"`
	PullRequest *PullRequest `json:"pullRequest,omitempty"`
}

// PullRequest is the pull request a run opened or updated.
type PullRequest struct {
	forge.PullRequest
	// Updated is set when an open pull request of the same head was updated instead of a new
	// one being opened.
	Updated bool `json:"updated"`
	// Superseded lists fleetform's earlier pull requests for the workload it closed.
	Superseded []int `json:"superseded,omitempty"`
}

// Result is what `app render`, `app plan` and `app apply` print.
type Result struct {
	Environment  string         `json:"environment"`
	Workload     string         `json:"workload"`
	Version      string         `json:"version,omitempty"`
	ImageTag     string         `json:"imageTag,omitempty"`
	SourceCommit string         `json:"sourceCommit,omitempty"`
	ConfigCommit string         `json:"configCommit,omitempty"`
	ConfigShape  string         `json:"configShape"`
	Targets      []TargetResult `json:"targets"`
	Mismatches   []Mismatch     `json:"mismatches"`
	Branches     []BranchResult `json:"branches,omitempty"`
	NoChange     bool           `json:"noChange"`
	// Warnings are what the renders found worth saying without failing: a kustomization's
	// deprecated fields, with its file.
	Warnings []string `json:"warnings,omitempty"`
}

// newResult starts the result of a run.
func newResult(r *Run) *Result {
	return &Result{Environment: r.Env, Workload: r.In.App.Workload.Metadata.Name, Version: r.In.Version,
		ImageTag: r.In.ImageTag, SourceCommit: r.In.App.Commit, ConfigCommit: r.In.Config.Commit,
		ConfigShape: r.In.Config.Shape, Targets: []TargetResult{}, Mismatches: orEmpty(r.Mismatches), NoChange: true}
}

func orEmpty(m []Mismatch) []Mismatch {
	if m == nil {
		return []Mismatch{}
	}
	return m
}

// Failed reports whether any target failed or any folder mismatched.
func (r *Result) Failed() bool {
	if len(r.Mismatches) > 0 {
		return true
	}
	for _, t := range r.Targets {
		if t.Status == StatusFailed {
			return true
		}
	}
	return false
}

func targetResult(t *TargetRun) TargetResult {
	return TargetResult{Target: t.Target.Name, Branch: t.Target.Branch, Path: t.Target.Path,
		ConfigFolder: t.Folder, Status: StatusUnchanged, Changes: []Change{}}
}

func (tr *TargetResult) fail(err error) {
	tr.Status, tr.Error = StatusFailed, err.Error()
}
