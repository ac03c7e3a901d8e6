package authoring

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"github.com/aymanbagabas/go-udiff"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/storage/filesystem/dotgit"

	"github.com/fleetform/fleetform/internal/controlplane"
	"github.com/fleetform/fleetform/internal/forge"
	"github.com/fleetform/fleetform/internal/gitops/gitrepo"
)

// Mode says what is done with a valid change.
type Mode string

// Modes.
const (
	// ModeWrite writes the files into the directory (or the folder layout's work tree). A
	// branch that is not checked out (the Kalypso layout, a bare repository) is committed.
	ModeWrite Mode = "write"
	// ModeDryRun validates and plans, and writes nothing.
	ModeDryRun Mode = "dry-run"
	// ModeCommit commits the change on its branch (the environment's in the Kalypso layout).
	ModeCommit Mode = "commit"
	// ModePR pushes a new branch with the commit to the origin remote (a remote control
	// plane itself) and opens a pull request.
	ModePR Mode = "pr"
	// ModePush commits the change on its branches of a remote control plane and pushes them,
	// moving each only from the commit the change was made on.
	ModePush Mode = "push"
)

// ErrInvalid means the change would make the control plane invalid: nothing was written.
var ErrInvalid = errors.New("the change is refused: it makes the control plane invalid")

// OperationError is an operation that cannot be made on the control plane as it is (a name
// that is not DNS-1123, an object that already exists or does not, an undeclared
// environment): the change is refused like an invalid one (errors.Is(err, ErrInvalid)), and
// its Result carries it as an error without a file.
type OperationError struct {
	Op  Operation
	Err error
}

func (e *OperationError) Error() string { return e.Op.Describe() + ": " + e.Err.Error() }

// Unwrap makes the error match ErrInvalid and its cause.
func (e *OperationError) Unwrap() []error { return []error{ErrInvalid, e.Err} }

// ErrConflict means the branch moved while the change was being made, every attempt.
var ErrConflict = errors.New("the control plane changed while the change was being made; try again")

// movedError is a branch of the control plane that moved while the change was being made:
// it is ErrConflict, and gitrepo.ErrConflict, which makes the change again (gitrepo.Retry).
type movedError struct{ branch string }

func (e *movedError) Error() string { return ErrConflict.Error() + ": branch " + e.branch + " moved" }

// Unwrap makes the error match ErrConflict and gitrepo.ErrConflict.
func (e *movedError) Unwrap() []error { return []error{ErrConflict, gitrepo.ErrConflict} }

// PROpener opens a pull request on the forge of repoURL.
type PROpener func(ctx context.Context, repoURL string, req forge.NewChangeRequest) (*forge.PullRequest, error)

// Request is a change to make.
type Request struct {
	// ControlPlane is a directory, a local git repository, or the URL of a remote one (changed
	// on its mirror in CacheDir, then pushed with ModePush or proposed with ModePR).
	ControlPlane string
	// CacheDir keeps the mirror of a remote control plane.
	CacheDir   string
	Platform   controlplane.Options
	Operations []Operation
	Mode       Mode
	// Author signs commits (name and email).
	Author object.Signature
	// Committer, when set, commits what Author authored (default: Author).
	Committer object.Signature
	// Message is the commit subject (default: what the operations do).
	Message string
	// Actor, when set, is recorded in the commit message's Changed-By trailer: who asked.
	Actor string
	// MaxAttempts bounds how many times the change is made again on the latest commit when
	// the branch moved in between (default 3).
	MaxAttempts int
	// OpenPR opens the pull request of ModePR.
	OpenPR PROpener
	// Remote is where ModePR pushes (default: the origin remote's URL).
	Remote string
	// Credentials for pushing to Remote (nil: git's own).
	Credentials gitCredentials
	// Renders, when set, remembers what rendered without error from one change to the
	// next, so that a change renders only the assignments whose inputs are new.
	Renders *RenderCache
	// Permit, when set, judges the change by what it touches before it is validated or
	// written; its error refuses the change (Apply returns it with the Result).
	Permit func(Scope) error
	Logger *slog.Logger
}

// FileChange is a file the change adds, modifies or deletes.
type FileChange struct {
	Branch string `json:"branch,omitempty"`
	Path   string `json:"path"`
	Action string `json:"action"`
	Diff   string `json:"diff,omitempty"`
}

// CommitRef is a commit the change made.
type CommitRef struct {
	Branch string `json:"branch"`
	Commit string `json:"commit"`
}

// Result is what a change did, or would do: the -o json of the authoring commands and the
// answer of the authoring API.
type Result struct {
	Operations []string     `json:"operations"`
	Valid      bool         `json:"valid"`
	NoChange   bool         `json:"noChange"`
	Written    bool         `json:"written"`
	Files      []FileChange `json:"files"`
	// Scope is what the files' documents touch: the workspaces, and the platform's objects.
	Scope   Scope             `json:"scope"`
	Plan    []EnvironmentPlan `json:"plan"`
	Commits []CommitRef       `json:"commits"`
	// PullRequest is set with ModePR.
	PullRequest *forge.PullRequest `json:"pullRequest,omitempty"`
	Notes       []string           `json:"notes,omitempty"`
	controlplane.DiagnosticReport
}

// Apply makes the change: edits, validation, plan, then what the mode says. A change that
// makes the control plane invalid returns the Result with its errors and ErrInvalid.
func Apply(ctx context.Context, req Request) (*Result, error) {
	if req.Logger == nil {
		req.Logger = slog.New(slog.DiscardHandler)
	}
	if err := checkMode(req); err != nil {
		return nil, err
	}
	attempts := max(req.MaxAttempts, 1)
	if req.MaxAttempts == 0 {
		attempts = 3
	}
	var res *Result
	err := gitrepo.Retry(ctx, attempts, "the control plane", req.Logger, func(int) error {
		var err error
		res, err = applyOnce(ctx, req)
		if errors.Is(err, controlplane.ErrMoved) || errors.Is(err, dotgit.ErrEmptyRefFile) {
			// Another writer changed the control plane while it was read: make the change
			// again on what it wrote.
			err = &movedError{branch: "being written"}
		}
		return err
	})
	return res, err
}

func applyOnce(ctx context.Context, req Request) (*Result, error) {
	ws, cp, err := openWorkspace(ctx, req, req.Mode == ModeCommit || req.Mode == ModePR)
	if err != nil {
		return nil, err
	}
	res := &Result{Files: []FileChange{}, Scope: Scope{Workspaces: []string{}}, Plan: []EnvironmentPlan{}, Commits: []CommitRef{},
		DiagnosticReport: controlplane.DiagnosticReport{Errors: []controlplane.Diagnostic{}}}
	for _, op := range req.Operations {
		res.Operations = append(res.Operations, op.Describe())
		if err := ws.apply(op); errors.Is(err, ErrConflict) {
			return nil, err
		} else if err != nil {
			res.Errors = append(res.Errors, controlplane.Diagnostic{Severity: controlplane.SeverityError, Kind: op.Kind, Name: op.Name,
				Message: err.Error()})
			return res, &OperationError{Op: op, Err: err}
		}
	}
	changed, err := ws.changed()
	if err != nil {
		return nil, err
	}
	if err := ws.describeFiles(res, changed); err != nil {
		return nil, err
	}
	if len(changed) == 0 {
		res.Valid, res.NoChange = true, true
		return res, nil
	}
	if req.Permit != nil {
		if err := req.Permit(res.Scope); err != nil {
			return res, err
		}
	}
	if err := ws.validate(ctx, cp, req, res, changed); err != nil {
		return res, err
	}
	return res, ws.finish(ctx, req, res)
}

// validate loads the control plane before and after, refuses new errors and plans.
func (ws *workspace) validate(ctx context.Context, cp *controlplane.ControlPlane, req Request, res *Result, changed []fileKey) error {
	before := cp
	if ws.g == nil {
		c, cleanup, err := ws.open(ctx, false)
		if err != nil {
			return err
		}
		defer cleanup()
		before = c
	}
	after, cleanup, err := ws.open(ctx, true)
	if err != nil {
		return err
	}
	defer cleanup()
	fs, err := loadBoth(ctx, before, after, req.Renders)
	if err != nil {
		return err
	}
	all := func(fs map[string]*fleet, ds []controlplane.Diagnostic) []controlplane.Diagnostic {
		for _, f := range fs {
			ds = append(ds, f.diags...)
		}
		return ds
	}
	made, known := splitProblems(all(fs.before, fs.beforeDiags), all(fs.after, fs.afterDiags))
	problems := append(made, unknownScopes(req.Operations, fs.after)...)
	res.Warnings = append(res.Warnings, known...)
	res.Plan = planFleet(fs.before, fs.after, ws.touchesCommon(changed))
	if len(problems) > 0 {
		res.Errors = problems
		return ErrInvalid
	}
	res.Valid = true
	return nil
}

// touchesCommon reports whether a change is in the common (promotable) content.
func (ws *workspace) touchesCommon(changed []fileKey) bool {
	for _, k := range changed {
		switch {
		case ws.layout == controlplane.LayoutKalypso && k.branch == ws.commonBranch() && !strings.HasPrefix(k.path, ".environments/"):
			return true
		case ws.layout != controlplane.LayoutKalypso && !strings.HasPrefix(k.path, "environments/"):
			return true
		}
	}
	return false
}

// describeFiles lists the changed files with their diffs.
func (ws *workspace) describeFiles(res *Result, changed []fileKey) error {
	for _, k := range changed {
		old, had, err := ws.base(k)
		if err != nil {
			return err
		}
		now := ws.changes[k]
		fc := FileChange{Branch: k.branch, Path: k.path, Action: "modify"}
		switch {
		case !had:
			fc.Action = "add"
		case now == nil:
			fc.Action = "delete"
		}
		oldName, newName := "a/"+k.path, "b/"+k.path
		if !had {
			oldName = "/dev/null"
		}
		if now == nil {
			newName = "/dev/null"
		}
		fc.Diff = udiff.Unified(oldName, newName, string(old), string(now))
		res.Files = append(res.Files, fc)
		res.Scope.addFile(old, now)
	}
	return nil
}

// message is the commit message of a change.
func message(req Request, res *Result) string {
	subject := req.Message
	if subject == "" {
		subject = "fleetform: " + oneLine(strings.Join(res.Operations, "; "))
	}
	msg := subject + "\n"
	if req.Actor != "" {
		msg += "\nChanged-By: " + oneLine(req.Actor) + "\n"
	}
	return msg
}

// oneLine is s with every control character (a line break above all: it would forge a
// paragraph or a trailer of the commit message) replaced by a space.
func oneLine(s string) string {
	return strings.Map(func(r rune) rune {
		if controlplane.IsControl(r) {
			return ' '
		}
		return r
	}, s)
}

// finish does what the mode says with a valid change.
func (ws *workspace) finish(ctx context.Context, req Request, res *Result) error {
	switch req.Mode {
	case ModeDryRun:
		return nil
	case ModeWrite, "":
		if ws.g == nil {
			if err := applyToDir(ws.dir, ws.changes); err != nil {
				return err
			}
			res.Written = true
			return nil
		}
		res.Notes = append(res.Notes, "a branch of a git repository is written by a commit")
		fallthrough
	case ModeCommit:
		if ws.g == nil {
			return fmt.Errorf("--commit: %s is not a git repository", ws.location)
		}
		commits, err := ws.commit(ctx, req, message(req, res))
		if err != nil {
			return err
		}
		res.Commits, res.Written = commits, true
		return nil
	case ModePush:
		commits, err := ws.push(ctx, req, message(req, res))
		if err != nil {
			return err
		}
		res.Commits, res.Written = commits, true
		return nil
	case ModePR:
		return ws.pullRequest(ctx, req, res)
	}
	return fmt.Errorf("mode %q: want write, dry-run, commit, push or pr", req.Mode)
}
