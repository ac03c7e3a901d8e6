package hub

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"time"
)

// Rollout counts, for every target of an environment's latest desired revision, the
// clusters of its cluster type by state: at the desired revision, the target's deployment
// status decides (else the cluster's status); at another revision, progressing; no fresh
// report, unknown.
func (h *Hub) Rollout(ctx context.Context, env string) (Rollout, error) {
	out, _, err := h.DesiredRollout(ctx, env)
	return out, err
}

// DesiredRollout is Rollout with the desired state it counts against, read once.
func (h *Hub) DesiredRollout(ctx context.Context, env string) (Rollout, Desired, error) {
	var out Rollout
	var d Desired
	err := h.store.View(ctx, func(r Reader) error {
		var err error
		d, err = r.LatestDesired(ctx, env)
		if errors.Is(err, ErrNotFound) {
			return Errorf(CodeNotFound, "environment %q has no desired state: fleetform apply --hub posts it", env)
		}
		if err != nil {
			return err
		}
		counts, err := r.TargetCounts(ctx, env, d.Revision)
		if err != nil {
			return err
		}
		clusters, err := r.ClusterCounts(ctx, env)
		if err != nil {
			return err
		}
		out = computeRollout(d, counts, clusters)
		versions, err := r.WorkloadVersions(ctx, env)
		if err != nil {
			return err
		}
		setVersions(&out, versions)
		return nil
	})
	return out, d, err
}

// setVersions sets the version application CI posted for each target of a rollout.
func setVersions(ro *Rollout, versions []WorkloadVersion) {
	if len(versions) == 0 {
		return
	}
	type key struct{ w, dt string }
	byTarget := make(map[key]string, len(versions))
	for _, v := range versions {
		byTarget[key{v.Workload, v.DeploymentTarget}] = v.Version
	}
	for i := range ro.Targets {
		t := &ro.Targets[i]
		t.Version = byTarget[key{t.Workload, t.DeploymentTarget}]
	}
}

func computeRollout(d Desired, counts []TargetCount, clusters []ClusterCount) Rollout {
	type key struct{ ct, dt string }
	byTarget := map[key]map[State]int{}
	for _, c := range counts {
		k := key{c.ClusterType, c.DeploymentTarget}
		if byTarget[k] == nil {
			byTarget[k] = map[State]int{}
		}
		byTarget[k][c.State] += c.Count
	}
	registered, fresh, atRevision := map[string]int{}, map[string]int{}, map[string]int{}
	for _, c := range clusters {
		if c.Revision == RegisteredRevision {
			registered[c.ClusterType] += c.Count
			continue
		}
		fresh[c.ClusterType] += c.Count
		if c.Revision == d.Revision {
			atRevision[c.ClusterType] += c.Count
		}
	}
	out := Rollout{Environment: d.Environment, Revision: d.Revision, Targets: make([]TargetRollout, 0, len(d.Assignments))}
	for _, a := range d.Assignments {
		s := byTarget[key{a.ClusterType, a.DeploymentTarget}]
		t := TargetRollout{Workload: a.Workload, DeploymentTarget: a.DeploymentTarget, ClusterType: a.ClusterType,
			Clusters: registered[a.ClusterType], Compliant: s[StateCompliant], Failed: s[StateFailed],
			Progressing: s[StateProgressing] + max(fresh[a.ClusterType]-atRevision[a.ClusterType], 0),
			Unknown:     max(registered[a.ClusterType]-fresh[a.ClusterType], 0)}
		out.Targets = append(out.Targets, t)
	}
	slices.SortFunc(out.Targets, func(a, b TargetRollout) int {
		return cmp.Or(cmp.Compare(a.ClusterType, b.ClusterType), cmp.Compare(a.DeploymentTarget, b.DeploymentTarget))
	})
	return out
}

// ClusterDetail is a cluster's state and recent history.
type ClusterDetail struct {
	ClusterRecord
	// State is the cluster's rollout state: unknown when it never reported or went silent.
	State        string            `json:"state"`
	Deployments  []DeploymentState `json:"deployments"`
	RecentEvents []Event           `json:"recentEvents"`
}

// Cluster returns a cluster's state, deployments and last 50 events.
func (h *Hub) Cluster(ctx context.Context, name string) (ClusterDetail, error) {
	var out ClusterDetail
	err := h.store.View(ctx, func(r Reader) error {
		c, err := r.Cluster(ctx, name)
		if errors.Is(err, ErrNotFound) {
			return Errorf(CodeNotFound, "cluster %q is not registered", name)
		}
		if err != nil {
			return err
		}
		out.ClusterRecord = c
		out.State = "unknown"
		if c.Reported && c.Fresh {
			out.State = string(c.Status)
		}
		if out.Deployments, err = r.Deployments(ctx, name); err != nil {
			return err
		}
		out.RecentEvents, err = r.History(ctx, HistoryFilter{Cluster: name, Limit: 50})
		return err
	})
	if out.Deployments == nil {
		out.Deployments = []DeploymentState{}
	}
	if out.RecentEvents == nil {
		out.RecentEvents = []Event{}
	}
	return out, err
}

// DefaultHistoryLimit and MaxHistoryLimit bound history answers.
const (
	DefaultHistoryLimit = 1000
	MaxHistoryLimit     = 10000
)

// History returns events, newest first.
func (h *Hub) History(ctx context.Context, f HistoryFilter) ([]Event, error) {
	if f.Limit <= 0 {
		f.Limit = DefaultHistoryLimit
	}
	f.Limit = min(f.Limit, MaxHistoryLimit)
	var out []Event
	err := h.store.View(ctx, func(r Reader) error {
		var err error
		out, err = r.History(ctx, f)
		return err
	})
	if out == nil {
		out = []Event{}
	}
	return out, err
}

// EnvDiff compares two environments workload by workload.
type EnvDiff struct {
	From      string         `json:"from"`
	To        string         `json:"to"`
	Workloads []WorkloadDiff `json:"workloads"`
}

// WorkloadDiff is how a workload differs between two environments.
type WorkloadDiff struct {
	Workload string       `json:"workload"`
	From     WorkloadSide `json:"from"`
	To       WorkloadSide `json:"to"`
	// Config lists the config keys whose values differ.
	Config []ConfigDiff `json:"config"`
	// Same is set when nothing differs.
	Same bool `json:"same"`
}

// WorkloadSide is a workload in one environment.
type WorkloadSide struct {
	DeploymentTargets []string `json:"deploymentTargets"`
	ClusterTypes      []string `json:"clusterTypes"`
	// Versions are the versions application CI reported, by deployment target.
	Versions map[string]string `json:"versions"`
}

// ConfigDiff is a config key with different values (every distinct value of each side).
type ConfigDiff struct {
	Key  string `json:"key"`
	From []any  `json:"from"`
	To   []any  `json:"to"`
	// Expected is set when the values differ only by the environments' own names (a key
	// such as the environment's name, or a host name containing it): a difference each
	// environment is meant to have, not a discrepancy.
	Expected bool `json:"expected,omitempty"`
	// FromClusterTypes and ToClusterTypes name, for each value of From and To (same index),
	// the cluster types that have it, sorted.
	FromClusterTypes [][]string `json:"fromClusterTypes,omitempty"`
	ToClusterTypes   [][]string `json:"toClusterTypes,omitempty"`
}

// Diff compares the latest desired states (and reported versions) of two environments.
func (h *Hub) Diff(ctx context.Context, from, to string) (EnvDiff, error) {
	out := EnvDiff{From: from, To: to, Workloads: []WorkloadDiff{}}
	sides := map[string]map[string]*workloadView{}
	err := h.store.View(ctx, func(r Reader) error {
		for _, env := range []string{from, to} {
			d, err := r.LatestDesired(ctx, env)
			if errors.Is(err, ErrNotFound) {
				return Errorf(CodeNotFound, "environment %q has no desired state", env)
			}
			if err != nil {
				return err
			}
			versions, err := r.WorkloadVersions(ctx, env)
			if err != nil {
				return err
			}
			sides[env] = viewWorkloads(d, versions)
		}
		return nil
	})
	if err != nil {
		return out, err
	}
	names := map[string]bool{}
	for _, side := range sides {
		for w := range side {
			names[w] = true
		}
	}
	for _, w := range slices.Sorted(maps.Keys(names)) {
		out.Workloads = append(out.Workloads, diffWorkload(from, to, w, sides[from][w], sides[to][w]))
	}
	return out, nil
}

// workloadView is a workload's side of a diff, with its config values by key.
type workloadView struct {
	side   WorkloadSide
	config map[string][]any
	// at is, for each key, the cluster types of each value, in the order the desired state
	// lists its assignments.
	at map[string][]valueAt
}

// valueAt is a config value on a cluster type.
type valueAt struct {
	value       any
	clusterType string
}

// typesOf names, for each of values, the cluster types of at that have it (sorted, unique).
func typesOf(values []any, at []valueAt) [][]string {
	out := make([][]string, len(values))
	for i, v := range values {
		for _, a := range at {
			if reflect.DeepEqual(a.value, v) {
				out[i] = appendUnique(out[i], a.clusterType)
			}
		}
		slices.Sort(out[i])
	}
	return out
}

func viewWorkloads(d Desired, versions []WorkloadVersion) map[string]*workloadView {
	out := map[string]*workloadView{}
	get := func(w string) *workloadView {
		if out[w] == nil {
			out[w] = &workloadView{side: WorkloadSide{Versions: map[string]string{}}, config: map[string][]any{}, at: map[string][]valueAt{}}
		}
		return out[w]
	}
	for _, a := range d.Assignments {
		v := get(a.Workload)
		v.side.DeploymentTargets = appendUnique(v.side.DeploymentTargets, a.DeploymentTarget)
		v.side.ClusterTypes = appendUnique(v.side.ClusterTypes, a.ClusterType)
		for k, val := range a.Config {
			v.config[k] = appendUniqueValue(v.config[k], val)
			v.at[k] = append(v.at[k], valueAt{value: val, clusterType: a.ClusterType})
		}
	}
	for _, ver := range versions {
		if v, ok := out[ver.Workload]; ok {
			v.side.Versions[ver.DeploymentTarget] = ver.Version
		}
	}
	for _, v := range out {
		slices.Sort(v.side.DeploymentTargets)
		slices.Sort(v.side.ClusterTypes)
	}
	return out
}

func diffWorkload(fromEnv, toEnv, name string, from, to *workloadView) WorkloadDiff {
	empty := &workloadView{side: WorkloadSide{DeploymentTargets: []string{}, ClusterTypes: []string{}, Versions: map[string]string{}}}
	if from == nil {
		from = empty
	}
	if to == nil {
		to = empty
	}
	out := WorkloadDiff{Workload: name, From: from.side, To: to.side, Config: []ConfigDiff{}}
	keys := map[string]bool{}
	for k := range from.config {
		keys[k] = true
	}
	for k := range to.config {
		keys[k] = true
	}
	for _, k := range slices.Sorted(maps.Keys(keys)) {
		if !reflect.DeepEqual(from.config[k], to.config[k]) {
			out.Config = append(out.Config, ConfigDiff{Key: k, From: orEmpty(from.config[k]), To: orEmpty(to.config[k]),
				Expected:         differByEnvironmentName(fromEnv, toEnv, from.config[k], to.config[k]),
				FromClusterTypes: typesOf(from.config[k], from.at[k]), ToClusterTypes: typesOf(to.config[k], to.at[k])})
		}
	}
	out.Same = !slices.ContainsFunc(out.Config, func(c ConfigDiff) bool { return !c.Expected }) && slices.Equal(from.side.ClusterTypes, to.side.ClusterTypes) &&
		maps.Equal(versionSet(from.side.Versions), versionSet(to.side.Versions))
	return out
}

// differByEnvironmentName reports whether two sides' values are the same once the source
// environment's name is replaced by the target's in every string (only for string values
// that contain the source's name).
func differByEnvironmentName(fromEnv, toEnv string, from, to []any) bool {
	if fromEnv == "" || len(from) == 0 || len(from) != len(to) {
		return false
	}
	renamed := make([]string, 0, len(from))
	for _, v := range from {
		s, ok := v.(string)
		if !ok || !strings.Contains(s, fromEnv) {
			return false
		}
		renamed = append(renamed, strings.ReplaceAll(s, fromEnv, toEnv))
	}
	slices.Sort(renamed)
	got := make([]string, 0, len(to))
	for _, v := range to {
		s, ok := v.(string)
		if !ok {
			return false
		}
		got = append(got, s)
	}
	slices.Sort(got)
	return slices.Equal(renamed, got)
}

func versionSet(m map[string]string) map[string]bool {
	out := map[string]bool{}
	for _, v := range m {
		out[v] = true
	}
	return out
}

func appendUnique(s []string, v string) []string {
	if slices.Contains(s, v) {
		return s
	}
	return append(s, v)
}

func appendUniqueValue(s []any, v any) []any {
	for _, x := range s {
		if reflect.DeepEqual(x, v) {
			return s
		}
	}
	s = append(s, v)
	slices.SortFunc(s, func(a, b any) int { return strings.Compare(fmt.Sprint(a), fmt.Sprint(b)) })
	return s
}

func orEmpty(s []any) []any {
	if s == nil {
		return []any{}
	}
	return s
}

// Drift is what does not match the desired state in an environment.
type Drift struct {
	Environment string `json:"environment"`
	Revision    string `json:"revision"`
	// Behind are fresh clusters still at another revision although the desired one was
	// posted longer ago than the limit.
	Behind []ClusterRecord `json:"behind"`
	// Failing are deployments whose status is Failed, and clusters reporting NonCompliant.
	Failing         []ClusterDeployment `json:"failing"`
	FailingClusters []ClusterRecord     `json:"failingClusters"`
	// Silent are clusters that never reported or whose latest report is stale.
	Silent []ClusterRecord `json:"silent"`
	// WrongPath are clusters reconciling a GitOps folder that is not their cluster type's.
	WrongPath []ClusterRecord `json:"wrongPath"`
}

// Drift lists an environment's clusters that are behind (beyond behindLimit), failing,
// silent or reconciling the wrong folder.
func (h *Hub) Drift(ctx context.Context, env string, behindLimit time.Duration) (Drift, error) {
	out := Drift{Environment: env, Behind: []ClusterRecord{}, Failing: []ClusterDeployment{},
		FailingClusters: []ClusterRecord{}, Silent: []ClusterRecord{}, WrongPath: []ClusterRecord{}}
	err := h.store.View(ctx, func(r Reader) error {
		d, err := r.LatestDesired(ctx, env)
		if err != nil && !errors.Is(err, ErrNotFound) {
			return err
		}
		out.Revision = d.Revision
		overdue := err == nil && h.opts.Now().Sub(d.PostedAt) > behindLimit
		clusters, err := r.Clusters(ctx, env)
		if err != nil {
			return err
		}
		for _, c := range clusters {
			switch {
			case !c.Reported || !c.Fresh:
				out.Silent = append(out.Silent, c)
				continue
			case overdue && c.Revision != d.Revision:
				out.Behind = append(out.Behind, c)
			}
			if c.Status == NonCompliant {
				out.FailingClusters = append(out.FailingClusters, c)
			}
			if c.GitOpsPath != "" && !pathBelongsTo(c.GitOpsPath, c.ClusterType) {
				out.WrongPath = append(out.WrongPath, c)
			}
		}
		failing, err := r.FailingDeployments(ctx, env)
		out.Failing = append(out.Failing, failing...)
		return err
	})
	return out, err
}

// DriftCounts is Drift counted: how many clusters are in each kind of drift, and the first
// names of each.
type DriftCounts struct {
	Silent, Behind, Failing, WrongPath NamedCount
}

// NamedCount is a number of clusters and the first of their names.
type NamedCount struct {
	Count int      `json:"count"`
	First []string `json:"first"`
}

// DriftSummary counts what Drift lists, in the store (cheap at any fleet size), with the
// first limit names of each kind.
func (h *Hub) DriftSummary(ctx context.Context, env string, behindLimit time.Duration, limit int) (DriftCounts, error) {
	var out DriftCounts
	err := h.store.View(ctx, func(r Reader) error {
		behindOf := ""
		d, err := r.LatestDesired(ctx, env)
		switch {
		case errors.Is(err, ErrNotFound):
		case err != nil:
			return err
		case h.opts.Now().Sub(d.PostedAt) > behindLimit:
			behindOf = d.Revision
		}
		out, err = r.DriftCounts(ctx, env, behindOf, limit)
		return err
	})
	return out, err
}

// pathBelongsTo reports whether a GitOps folder is a cluster type's: its last element is
// the cluster type's name.
func pathBelongsTo(path, clusterType string) bool {
	p := strings.TrimSuffix(strings.TrimPrefix(path, "./"), "/")
	return p == clusterType || strings.HasSuffix(p, "/"+clusterType)
}
