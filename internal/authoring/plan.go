package authoring

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"

	"github.com/fleetform/fleetform/internal/compose"
	"github.com/fleetform/fleetform/internal/controlplane"
	"github.com/fleetform/fleetform/internal/gitops"
	"github.com/fleetform/fleetform/internal/pipeline"
	"github.com/fleetform/fleetform/internal/promote"
	"github.com/fleetform/fleetform/internal/render"
	"github.com/fleetform/fleetform/internal/schedule"
)

// EnvironmentPlan is what a change does to one environment's fleet: the data of `plan`
// without the GitOps repository.
type EnvironmentPlan struct {
	Environment          string                 `json:"environment"`
	AssignmentsAdded     []gitops.AssignmentRef `json:"assignmentsAdded"`
	AssignmentsRemoved   []gitops.AssignmentRef `json:"assignmentsRemoved"`
	ConfigChanged        []ConfigChange         `json:"configChanged"`
	ClusterTypesAffected []string               `json:"clusterTypesAffected"`
	// Note says why a change does not show yet (an environment pinned to a promoted commit).
	Note string `json:"note,omitempty"`
}

// ConfigChange is a composed config value that changes on one assignment. Before or After
// is absent when the key is added or removed.
type ConfigChange struct {
	ClusterType      string `json:"clusterType"`
	DeploymentTarget string `json:"deploymentTarget"`
	Key              string `json:"key"`
	Before           any    `json:"before,omitempty"`
	After            any    `json:"after,omitempty"`
}

// fleet is one environment loaded and scheduled, with its diagnostics, or its failure.
type fleet struct {
	run   *pipeline.Run
	err   error
	diags []controlplane.Diagnostic
	rank  int // its place in the promotion chain (the chain's start first)
}

// loadFleet loads every environment of cp up to rendering (for validation) and its chain.
// The assignments whose input digests known holds are known to render without error: they
// are not rendered again.
func loadFleet(ctx context.Context, cp *controlplane.ControlPlane, known func(digest string) bool) (map[string]*fleet, []controlplane.Diagnostic, error) {
	infos, envDiags, err := cp.Environments(ctx)
	if err != nil {
		return nil, nil, err
	}
	chain, chainDiags := promote.NewChain(infos)
	rank := map[string]int{}
	for i, env := range chain.Order {
		rank[env] = i
	}
	out := map[string]*fleet{}
	for _, info := range infos {
		r, err := pipeline.LoadKnowing(ctx, cp, info.Name, render.Options{}, known)
		if ctx.Err() != nil {
			return nil, nil, ctx.Err()
		}
		f := &fleet{run: r, err: err, rank: rank[info.Name]}
		if err != nil {
			f.diags = controlplane.AsDiagnostics(err)
		} else {
			f.diags = r.Diagnostics()
			f.diags = append(f.diags, templateDiagnostics(r.Snapshot)...)
		}
		out[info.Name] = f
	}
	return out, append(envDiags, chainDiags...), nil
}

// templateDiagnostics reports cluster types whose templates do not exist, even when nothing
// is scheduled on them yet (render only sees them through assignments).
func templateDiagnostics(s *controlplane.Snapshot) []controlplane.Diagnostic {
	e := render.NewEngine(s)
	var out []controlplane.Diagnostic
	for _, ct := range s.ClusterTypes {
		_, problems := e.TemplatesFor(ct.Spec)
		for _, p := range problems {
			field, msg := render.SplitField(p)
			d := ct.Source.Diag(field, msg, "use a Template of the control plane or a built-in one (builtin/flux, builtin/argocd, builtin/namespace, builtin/configmap, ...)")
			d.Kind, d.Name = "ClusterType", ct.Metadata.Name
			out = append(out, d)
		}
	}
	return out
}

// diagKey identifies a diagnostic across edits (lines move).
func diagKey(d controlplane.Diagnostic) string {
	return strings.Join([]string{string(d.Severity), d.Repo, d.File, d.Kind, d.Name, d.Path, d.Message}, "\x00")
}

// splitProblems splits the errors of after into those before did not have (the change
// made them: it is refused) and those it had (known: they do not refuse the change, but
// what they hide, a registration that cannot be read or an environment that does not load,
// is missing from the plan too, so the plan shows them as warnings saying so).
func splitProblems(before, after []controlplane.Diagnostic) (made, known []controlplane.Diagnostic) {
	had := map[string]bool{}
	for _, d := range before {
		had[diagKey(d)] = true
	}
	seen := map[string]bool{}
	for _, d := range after {
		k := diagKey(d)
		if d.Severity != controlplane.SeverityError || seen[k] {
			continue
		}
		seen[k] = true
		if !had[k] {
			made = append(made, d)
			continue
		}
		d.Severity = controlplane.SeverityWarning
		d.Message = "the control plane already has this error, and the plan cannot see what it hides: " + d.Message
		known = append(known, d)
	}
	return made, known
}

// planFleet compares every environment before and after, in the chain's order (then the
// environments removed).
func planFleet(before, after map[string]*fleet, commonChanged bool) []EnvironmentPlan {
	names := slices.Collect(maps.Keys(after))
	slices.SortFunc(names, func(a, b string) int { return cmp.Or(cmp.Compare(after[a].rank, after[b].rank), cmp.Compare(a, b)) })
	for _, n := range slices.Sorted(maps.Keys(before)) {
		if after[n] == nil {
			names = append(names, n)
		}
	}
	out := []EnvironmentPlan{}
	for _, n := range names {
		p := EnvironmentPlan{Environment: n, AssignmentsAdded: []gitops.AssignmentRef{}, AssignmentsRemoved: []gitops.AssignmentRef{},
			ConfigChanged: []ConfigChange{}, ClusterTypesAffected: []string{}}
		b, a := runOf(before[n]), runOf(after[n])
		diffAssignments(&p, b, a)
		if a != nil && commonChanged && a.Snapshot.Revisions.Pinned {
			c := a.Snapshot.Revisions.Common
			p.Note = fmt.Sprintf("pinned to %s: the change to common content reaches %s when it is promoted (fleetform promote --to %s)",
				c[:min(len(c), 12)], n, n)
		}
		if after[n] == nil {
			p.Note = "environment removed"
		}
		out = append(out, p)
	}
	return out
}

func runOf(f *fleet) *pipeline.Run {
	if f == nil || f.err != nil {
		return nil
	}
	return f.run
}

type pairKey struct{ ct, dt string }

// side is one run's assignments by pair, with their composed configs.
type side struct {
	run    *pipeline.Run
	byPair map[pairKey]int // the index in run.Schedule.Assignments
	// composer composes the configs the render did not (nil until one is needed).
	composer *compose.Composer
}

func newSide(r *pipeline.Run) *side {
	s := &side{run: r, byPair: map[pairKey]int{}}
	if r == nil {
		return s
	}
	for i, a := range r.Schedule.Assignments {
		s.byPair[pairKey{a.ClusterType, a.DeploymentTarget}] = i
	}
	return s
}

func (s *side) assignment(i int) schedule.Assignment { return s.run.Schedule.Assignments[i] }

// config is assignment i's composed config: the render's, else composed now.
func (s *side) config(i int) *compose.Config {
	if o := s.run.Output; o != nil && o.Assignments[i].Config != nil {
		return o.Assignments[i].Config
	}
	if s.composer == nil {
		s.composer = compose.New(s.run.Snapshot)
	}
	a := &s.run.Schedule.Assignments[i]
	return s.composer.Compose(a.Type, a.Target)
}

func ref(a schedule.Assignment) gitops.AssignmentRef {
	return gitops.AssignmentRef{Workload: a.Workload, DeploymentTarget: a.DeploymentTarget, ClusterType: a.ClusterType, Namespace: a.Namespace}
}

// configPair is a config before and after: configs are shared by the assignments composed
// from the same sources, so a pair is compared once.
type configPair struct{ before, after *compose.Config }

// diffAssignments fills the assignments gained and lost and the config values changed.
func diffAssignments(p *EnvironmentPlan, b, a *pipeline.Run) {
	before, after := newSide(b), newSide(a)
	affected := map[string]bool{}
	compared := map[configPair][]ConfigChange{}
	for _, k := range slices.SortedFunc(maps.Keys(after.byPair), comparePairs) {
		i := after.byPair[k]
		j, had := before.byPair[k]
		if !had {
			p.AssignmentsAdded = append(p.AssignmentsAdded, ref(after.assignment(i)))
			affected[k.ct] = true
			continue
		}
		pair := configPair{before.config(j), after.config(i)}
		changes, ok := compared[pair]
		if !ok {
			changes = diffConfig(pair.before.Data, pair.after.Data)
			compared[pair] = changes
		}
		for _, c := range changes {
			c.ClusterType, c.DeploymentTarget = k.ct, k.dt
			p.ConfigChanged = append(p.ConfigChanged, c)
			affected[k.ct] = true
		}
	}
	for _, k := range slices.SortedFunc(maps.Keys(before.byPair), comparePairs) {
		if _, ok := after.byPair[k]; !ok {
			p.AssignmentsRemoved = append(p.AssignmentsRemoved, ref(before.assignment(before.byPair[k])))
			affected[k.ct] = true
		}
	}
	p.ClusterTypesAffected = append([]string{}, slices.Sorted(maps.Keys(affected))...)
}

func comparePairs(x, y pairKey) int {
	if c := strings.Compare(x.ct, y.ct); c != 0 {
		return c
	}
	return strings.Compare(x.dt, y.dt)
}

func diffConfig(b, a map[string]any) []ConfigChange {
	var out []ConfigChange
	keys := map[string]bool{}
	for k := range b {
		keys[k] = true
	}
	for k := range a {
		keys[k] = true
	}
	for _, k := range slices.Sorted(maps.Keys(keys)) {
		if !reflect.DeepEqual(b[k], a[k]) {
			out = append(out, ConfigChange{Key: k, Before: b[k], After: a[k]})
		}
	}
	return out
}
