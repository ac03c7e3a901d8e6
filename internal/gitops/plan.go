package gitops

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"path"
	"slices"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/fleetform/fleetform/internal/controlplane"
	"github.com/fleetform/fleetform/internal/gitops/gitrepo"
	"github.com/fleetform/fleetform/internal/render"
	"github.com/fleetform/fleetform/internal/schedule"
)

// Target is where an environment's tree goes.
type Target struct {
	// Repo is a URL (https, ssh, file) or a local path.
	Repo string
	// Branch is created when it does not exist.
	Branch string
	// Path is the folder the tree is written under ("" or "." for the root).
	Path string
}

// Input is what to write: a loaded environment and its schedule.
type Input struct {
	Snapshot *controlplane.Snapshot
	Schedule *schedule.Result
	Target   Target
}

// Change is one file a plan writes or removes.
type Change struct {
	// Path is relative to the GitOps path.
	Path   string `json:"path"`
	Action string `json:"action"` // add, modify or delete
	// Old and New are the contents (only with Options.Diff).
	Old []byte `json:"-"`
	New []byte `json:"-"`
}

// AssignmentRef names an assignment.
type AssignmentRef struct {
	Workload         string `json:"workload"`
	DeploymentTarget string `json:"deploymentTarget"`
	ClusterType      string `json:"clusterType"`
	Namespace        string `json:"namespace"`
}

// FailedAssignment is an assignment that could not be rendered: its files are kept.
type FailedAssignment struct {
	AssignmentRef
	Error string `json:"error"`
}

// MassDelete describes a plan that removes more owned folders than allowed.
type MassDelete struct {
	Removed   int     `json:"removed"`
	Owned     int     `json:"owned"`
	Threshold float64 `json:"threshold"`
}

func (m *MassDelete) Error() string {
	return fmt.Sprintf("refusing to remove %d of %d deployment-target folders (more than %.0f%%): an empty or unreachable "+
		"source must not wipe a fleet; check the control plane, or pass --allow-mass-delete if this is intended",
		m.Removed, m.Owned, m.Threshold*100)
}

// Plan is what an apply will do.
type Plan struct {
	Environment string
	Target      Target
	// Base is the branch tip the plan was made against (zero: the branch is new).
	Base    plumbing.Hash
	Changes []Change
	// AssignmentsAdded and AssignmentsRemoved compare with what the branch had.
	AssignmentsAdded     []AssignmentRef
	AssignmentsRemoved   []AssignmentRef
	ClusterTypesAffected []string
	// Deferred are folders that would be removed but are kept because the control plane
	// has errors (a target may be missing only because its file is broken).
	Deferred []string
	Failed   []FailedAssignment
	// Rendered and Skipped count the assignments rendered again and those whose inputs
	// had not changed.
	Rendered, Skipped int
	// Composed counts the assignments whose configs were composed and inputs digested: the
	// others belong to cluster types whose inputs are those the state records (TypeKey).
	Composed int
	// StateChanged is set when the state file changes (even with no visible change).
	StateChanged bool
	MassDelete   *MassDelete
	// Output is the render; the Files of the assignments rendered are dropped once written
	// into the tree (a fleet's files are not held in memory): Rendered counts them.
	Output *render.Output

	// tree is the branch tip's tree, edited into the tree the plan writes.
	tree tree
	base string
}

// NoChange reports whether applying the plan would write nothing.
func (p *Plan) NoChange() bool { return len(p.Changes) == 0 && !p.StateChanged }

// Options tune planning and applying.
type Options struct {
	// MassDeleteThreshold is the largest fraction of owned deployment-target folders an
	// apply may remove without AllowMassDelete (default 0.5).
	MassDeleteThreshold float64
	AllowMassDelete     bool
	// Diff keeps the old and new content of every changed file in the plan.
	Diff bool
	// CacheDir holds bare clones of remote repositories.
	CacheDir string
	// Workers render in parallel (0: GOMAXPROCS).
	Workers int
	// Progress, when set, is told how many assignments have been composed or rendered.
	Progress func(done, total int)
	Logger   *slog.Logger
	// Credentials choose the credential sent to a remote repository's URL (see
	// Credentials); nil sends none (git's own credential helpers still apply).
	Credentials Credentials
}

// planner holds one plan being built.
type planner struct {
	p    *Plan
	opts *Options
	// index and shards are the state as the branch has it (nil: no state).
	index  *index
	shards map[string]plumbing.Hash // cluster type -> shard blob
	keys   map[string]plumbing.Hash // cluster type -> its assignments' keys
	// workloads are the cluster types' workload keys (WorkloadsDir).
	workloads map[string]plumbing.Hash
	// stop ends the render early when closed (the command was stopped).
	stop <-chan struct{}
	// log holds the changes until the plan is complete (without Options.Diff).
	log changeLog
	// planOnly is set for a plan that is only shown, never committed.
	planOnly bool
}

// makePlan reads the branch and plans the change. A plan made only to be shown (planOnly)
// keeps none of the objects it would write. A plan that fails drops them.
func makePlan(ctx context.Context, repo *gitrepo.Repo, in Input, opts *Options, planOnly bool) (p *Plan, err error) {
	if err := checkTarget(in); err != nil {
		return nil, err
	}
	tip, err := repo.Tip(ctx, in.Target.Branch)
	if err != nil {
		return nil, err
	}
	t, err := repo.Edit(tip)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", in.Target.Branch, err)
	}
	if planOnly {
		t.PlanOnly()
	}
	defer func() {
		if err != nil {
			t.Discard()
		}
	}()
	p = &Plan{Environment: in.Snapshot.Environment, Target: in.Target, Base: tip, tree: t, base: cleanPath(in.Target.Path)}
	pl := &planner{p: p, opts: opts, stop: ctx.Done(), planOnly: planOnly}
	if err := pl.readState(); err != nil {
		return nil, err
	}
	if err := pl.build(in); err != nil {
		if errors.Is(err, errStopped) && ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err // stopped while rendering: the plan is incomplete
	}
	slices.SortFunc(p.Changes, func(a, b Change) int { return strings.Compare(a.Path, b.Path) })
	return p, nil
}

func cleanPath(p string) string {
	p = strings.Trim(path.Clean("/"+strings.TrimSpace(p)), "/")
	if p == "." {
		return ""
	}
	return p
}

// full returns a path under the GitOps path.
func (p *Plan) full(rel string) string {
	if p.base == "" {
		return rel
	}
	return p.base + "/" + rel
}

// readState reads the index and lists the shards (their content is read only for the
// cluster types that changed).
func (pl *planner) readState() error {
	h, ok, err := pl.p.tree.File(pl.p.full(IndexFile))
	if err != nil || !ok {
		return err
	}
	data, err := pl.p.tree.Blob(h)
	if err != nil {
		return err
	}
	x, err := decodeIndex(data)
	if err != nil {
		pl.logger().Warn("ignoring fleetform's state: every cluster type is compared in full", "error", err.Error())
		return nil
	}
	if pl.shards, err = pl.p.tree.Files(pl.p.full(ShardDir)); err != nil {
		return err
	}
	if pl.keys, err = pl.p.tree.Files(pl.p.full(KeysDir)); err != nil {
		return err
	}
	if pl.workloads, err = pl.p.tree.Files(pl.p.full(WorkloadsDir)); err != nil {
		return err
	}
	pl.index = x
	return nil
}

func (pl *planner) logger() *slog.Logger {
	if pl.opts.Logger != nil {
		return pl.opts.Logger
	}
	return slog.New(slog.DiscardHandler)
}

func refOf(a *schedule.Assignment) AssignmentRef {
	return AssignmentRef{Workload: a.Workload, DeploymentTarget: a.DeploymentTarget, ClusterType: a.ClusterType, Namespace: a.Namespace}
}

func sortedSet(m map[string]bool) []string { return slices.Sorted(maps.Keys(m)) }

// namespaceOf is the namespace an assignment had (for removed assignments).
func namespaceOf(env, ct, dt string) string { return schedule.Namespace(env, ct, dt) }
