package ui

import (
	"context"
	"net/http"
	"slices"
	"strings"

	"github.com/fleetform/fleetform/internal/hub"
	"github.com/fleetform/fleetform/internal/yamlnode"
)

// historyLimit bounds the events a timeline summarises.
const historyLimit = 5000

// workloadTarget is a deployment target of a workload on one cluster type of an environment.
type workloadTarget struct {
	Name        string
	ClusterType string
	Counts      counts
	Version     string
	Config      []configValue
	// Waiting says why the assignment waits for platform configuration (none: it does not).
	Waiting []string
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

type workloadData struct {
	Workload string
	Envs     []workloadEnv
	Timeline []hub.RevisionSummary
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
		for _, p := range promos {
			if p.Workload == "" { // the platform's; the workload's own are in events already, others' are not its
				events = append(events, p)
			}
		}
	}
	out.Timeline = hub.SummariseHistory(events)
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
	version := map[string]string{}
	for _, v := range versions {
		if v.Workload == name {
			version[v.DeploymentTarget] = v.Version
		}
	}
	assignments := map[[2]string]hub.DesiredAssignment{}
	for _, a := range d.Assignments {
		if a.Workload == name {
			assignments[[2]string{a.DeploymentTarget, a.ClusterType}] = a
		}
	}
	for _, t := range mine { // sorted by cluster type, then target
		a := assignments[[2]string{t.DeploymentTarget, t.ClusterType}]
		out.Targets = append(out.Targets, workloadTarget{Name: t.DeploymentTarget, ClusterType: t.ClusterType, Counts: targetCounts(t),
			Version: version[t.DeploymentTarget], Config: configValues(a.Config), Waiting: a.Waiting})
	}
	slices.SortStableFunc(out.Targets, func(a, b workloadTarget) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

func configValues(m map[string]any) []configValue {
	out := make([]configValue, 0, len(m))
	for _, k := range sortedKeys(m) {
		out = append(out, configValue{Key: k, Value: yamlnode.Text(m[k])})
	}
	return out
}
