package app

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/fleetform/fleetform/internal/controlplane"
)

// Run is one environment of an application, composed: its targets with their values and
// the config folders that match none.
type Run struct {
	In         *Inputs
	Env        string
	Targets    []*TargetRun
	Mismatches []Mismatch
}

// TargetRun is one deployment target of a run.
type TargetRun struct {
	Target Target
	// Folder is the target's config folder ("" when it has none: Err says so).
	Folder string
	Values *Values
	Digest string
	Err    error
}

// NewRun composes the values of every deployment target of environment env. A target
// whose folder is missing or whose values cannot be composed carries its error; the
// others are not affected. Folders that match no target are reported as mismatches.
func NewRun(in *Inputs, env string) (*Run, error) {
	targets := in.App.Targets(env)
	if len(targets) == 0 {
		return nil, fmt.Errorf("%s: workload %s has no deployment target in environment %s", in.App.Workload.Source.File,
			in.App.Workload.Metadata.Name, env)
	}
	if err := checkPaths(targets); err != nil {
		return nil, err
	}
	r := &Run{In: in, Env: env}
	matched, mismatches := in.Config.Match(targets)
	r.Mismatches = mismatches
	for _, p := range in.Config.Problems {
		r.Mismatches = append(r.Mismatches, Mismatch{Message: p})
	}
	for _, t := range targets {
		tr := &TargetRun{Target: t, Folder: matched[t.Name]}
		r.Targets = append(r.Targets, tr)
		if tr.Folder == "" {
			for _, m := range mismatches {
				if m.Target == t.Name {
					tr.Err = fmt.Errorf("%s", m.Message)
				}
			}
			continue
		}
		tr.Values, tr.Err = in.Compose(tr.Folder)
		if tr.Err == nil {
			tr.Digest = in.Digest(t, tr.Values)
		}
	}
	return r, nil
}

// checkPaths refuses targets without a folder of their own on their branch: fleetform owns
// each target's folder, so two targets cannot share one, nest, or take the whole branch.
func checkPaths(targets []Target) error {
	var errs []string
	for i, t := range targets {
		if t.Path == "" {
			errs = append(errs, fmt.Sprintf("deployment target %s: manifests.path must name a folder (not the root of the branch)", t.Name))
		} else if err := controlplane.CheckGitOpsPath(t.Path); err != nil {
			errs = append(errs, fmt.Sprintf("deployment target %s: manifests.path: %v", t.Name, err))
		}
		for _, o := range targets[:i] {
			if o.Branch == t.Branch && t.Path != "" && o.Path != "" &&
				(o.Path == t.Path || strings.HasPrefix(o.Path, t.Path+"/") || strings.HasPrefix(t.Path, o.Path+"/")) {
				errs = append(errs, fmt.Sprintf("deployment targets %s and %s: manifests paths %s and %s overlap on branch %s",
					o.Name, t.Name, o.Path, t.Path, t.Branch))
			}
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("%s", strings.Join(errs, "\n"))
	}
	return nil
}

// Target returns the run's target named name.
func (r *Run) Target(name string) (*TargetRun, bool) {
	i := slices.IndexFunc(r.Targets, func(t *TargetRun) bool { return t.Target.Name == name })
	if i < 0 {
		return nil, false
	}
	return r.Targets[i], true
}

// Render renders one target's folder.
func (r *Run) Render(ctx context.Context, t *TargetRun) (*Folder, error) {
	if t.Err != nil {
		return nil, t.Err
	}
	return r.In.Render(ctx, t.Target, t.Values)
}
