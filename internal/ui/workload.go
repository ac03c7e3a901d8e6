package ui

import (
	"cmp"
	"context"
	"net/http"
	"slices"
	"time"

	"github.com/fleetform/fleetform/internal/hub"
	"github.com/fleetform/fleetform/internal/yamlnode"
)

// historyLimit bounds the events a timeline summarises.
const historyLimit = 5000

// workloadTarget is a deployment target of a workload in an environment.
type workloadTarget struct {
	Name         string
	ClusterTypes []string
	Counts       counts
	Version      string
	Config       []configValue
}

// configValue is one composed configuration value, shown as YAML when structured.
type configValue struct {
	Key, Value string
}

type workloadEnv struct {
	Env     string
	Counts  counts
	Targets []workloadTarget
}

// timelineEntry summarises the events of one revision in one environment: how many status
// transitions went to each state, from when to when.
type timelineEntry struct {
	Env, Revision, Kind string
	First, Last         time.Time
	// To counts the transitions by the state they reached.
	To      map[string]int
	Message string
}

type workloadData struct {
	Workload string
	Envs     []workloadEnv
	Timeline []timelineEntry
	// Cut is set when the timeline summarises only the latest events.
	Cut bool
}

func (u *Handler) workload(w http.ResponseWriter, r *http.Request, s session) {
	name := r.PathValue("name")
	data, err := u.workloadData(r.Context(), name)
	if err != nil {
		u.fail(w, r, s, err)
		return
	}
	u.render(w, r, s, "workload", "Workload "+name, "overview", data)
}

func (u *Handler) workloadData(ctx context.Context, name string) (workloadData, error) {
	out := workloadData{Workload: name}
	envs, err := u.environments(ctx)
	if err != nil {
		return out, err
	}
	for _, env := range envs {
		we, err := u.workloadIn(ctx, env.name, name)
		if err != nil {
			return out, err
		}
		if len(we.Targets) > 0 {
			out.Envs = append(out.Envs, we)
		}
	}
	if len(out.Envs) == 0 {
		return out, hub.Errorf(hub.CodeNotFound, "no environment's latest desired state has workload %q", name)
	}
	events, err := u.hub.History(ctx, hub.HistoryFilter{Workload: name, Limit: historyLimit})
	if err != nil {
		return out, err
	}
	out.Cut = len(events) == historyLimit
	for _, we := range out.Envs {
		promos, err := u.hub.History(ctx, hub.HistoryFilter{Environment: we.Env, Kind: hub.EventPromotion, Limit: 20})
		if err != nil {
			return out, err
		}
		events = append(events, promos...)
	}
	out.Timeline = summarise(events)
	return out, nil
}

// workloadIn is a workload's targets in one environment's latest desired state.
func (u *Handler) workloadIn(ctx context.Context, env, name string) (workloadEnv, error) {
	out := workloadEnv{Env: env}
	ro, d, err := u.hub.DesiredRollout(ctx, env)
	if hub.ErrorCode(err) == hub.CodeNotFound {
		return out, nil
	}
	if err != nil {
		return out, err
	}
	var mine []hub.TargetRollout
	for _, t := range ro.Targets {
		if t.Workload == name {
			mine = append(mine, t)
		}
	}
	if len(mine) == 0 {
		return out, nil
	}
	out.Counts = workloadCounts(mine)
	versions, err := u.hub.Versions(ctx, env)
	if err != nil {
		return out, err
	}
	byTarget := map[string]*workloadTarget{}
	for _, t := range mine {
		wt := byTarget[t.DeploymentTarget]
		if wt == nil {
			wt = &workloadTarget{Name: t.DeploymentTarget}
			byTarget[t.DeploymentTarget] = wt
		}
		wt.ClusterTypes = append(wt.ClusterTypes, t.ClusterType)
		wt.Counts.add(targetCounts(t))
	}
	for _, a := range d.Assignments {
		if wt := byTarget[a.DeploymentTarget]; wt != nil && a.Workload == name && wt.Config == nil {
			wt.Config = configValues(a.Config)
		}
	}
	for _, v := range versions {
		if wt := byTarget[v.DeploymentTarget]; wt != nil && v.Workload == name {
			wt.Version = v.Version
		}
	}
	for _, dt := range sortedKeys(byTarget) {
		out.Targets = append(out.Targets, *byTarget[dt])
	}
	return out, nil
}

func configValues(m map[string]any) []configValue {
	out := make([]configValue, 0, len(m))
	for _, k := range sortedKeys(m) {
		out = append(out, configValue{Key: k, Value: yamlnode.Text(m[k])})
	}
	return out
}

// summarise folds events into one entry per environment, revision and kind, newest first.
func summarise(events []hub.Event) []timelineEntry {
	type key struct{ env, rev, kind string }
	byKey := map[key]*timelineEntry{}
	for _, e := range events {
		k := key{e.Environment, e.Revision, e.Kind}
		t := byKey[k]
		if t == nil {
			t = &timelineEntry{Env: e.Environment, Revision: e.Revision, Kind: e.Kind, First: e.Time, Last: e.Time, To: map[string]int{}}
			byKey[k] = t
		}
		t.First, t.Last = minTime(t.First, e.Time), maxTime(t.Last, e.Time)
		if e.To != "" && (e.Kind == hub.EventDeployment || e.Kind == hub.EventCluster) {
			t.To[e.To]++
		}
		if e.Kind == hub.EventPromotion || e.Kind == hub.EventApproval {
			if !e.Time.Before(t.Last) {
				t.Message = e.Message
			}
		}
	}
	out := make([]timelineEntry, 0, len(byKey))
	for _, t := range byKey {
		out = append(out, *t)
	}
	slices.SortFunc(out, func(a, b timelineEntry) int {
		return cmp.Or(b.Last.Compare(a.Last), cmp.Compare(a.Env, b.Env), cmp.Compare(a.Kind, b.Kind), cmp.Compare(a.Revision, b.Revision))
	})
	return out
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
