package ui

import (
	"context"
	"net/http"
	"slices"

	"github.com/fleetform/fleetform/internal/pipeline"
	"github.com/fleetform/fleetform/internal/yamlnode"
)

// Scheduler loads an environment of the control plane and schedules it, for the explain
// pages (serve's; without it they show the command to run instead).
type Scheduler interface {
	Schedule(ctx context.Context, env string) (*pipeline.Run, error)
}

// SetScheduler enables the explain pages (before the handler serves requests).
func (u *Handler) SetScheduler(s Scheduler) { u.opts.Scheduler = s }

// provenanceRow is a config value with where it comes from and what it shadowed.
type provenanceRow struct {
	Key, Value, SetBy, At string
	Shadows               []string
}

// placeRow is a pair of a list with the decision's sentences.
type placeRow struct {
	Name      string
	Scheduled bool
	Why       []string
	Link      string
}

type explainData struct {
	Envs                     []string
	Env, ClusterType, Target string
	Enabled                  bool
	Problem                  string
	Pair                     *pipeline.Explanation
	Why                      []string
	Values                   []provenanceRow
	// Places lists the other side of the question: cluster types for a target, targets for
	// a cluster type.
	Places      []placeRow
	PlacesTitle string
	// KnownTypes and KnownTargets are the environment's names, offered in the form.
	KnownTypes, KnownTargets []string
}

// explain answers "why is X (not) on Y, and where does each value come from?" (env,
// clusterType and target), "where could X go?" (env and target) and "what is on Y?" (env
// and clusterType).
func (u *Handler) explain(w http.ResponseWriter, r *http.Request, s session) {
	q := r.URL.Query()
	data := explainData{Env: q.Get("env"), ClusterType: q.Get("clusterType"), Target: q.Get("target"), Enabled: u.opts.Scheduler != nil}
	var err error
	if data.Envs, err = u.environmentNames(r.Context()); err != nil {
		u.fail(w, r, s, err)
		return
	}
	if data.Env == "" && len(data.Envs) > 0 {
		data.Env = data.Envs[0]
	}
	status := http.StatusOK
	if data.Enabled && data.Env != "" {
		if err := u.answer(r.Context(), &data); err != nil {
			data.Problem, status = credentialFree(err.Error()), http.StatusNotFound
		}
	}
	u.renderStatus(w, r, s, status, "explain", "Explain", "explain", data)
}

// answer schedules the environment, lists its names for the form and, when the form names a
// cluster type or a target, answers the question.
func (u *Handler) answer(ctx context.Context, d *explainData) error {
	run, err := u.opts.Scheduler.Schedule(ctx, d.Env)
	if err != nil {
		return err
	}
	for _, ct := range run.Snapshot.ClusterTypes {
		d.KnownTypes = append(d.KnownTypes, ct.Metadata.Name)
	}
	for _, dt := range run.Snapshot.DeploymentTargets {
		d.KnownTargets = append(d.KnownTargets, dt.Name)
	}
	slices.Sort(d.KnownTypes)
	slices.Sort(d.KnownTargets)
	switch {
	case d.ClusterType == "" && d.Target == "":
		return nil
	case d.ClusterType != "" && d.Target != "":
		d.Pair, err = run.Explain(d.ClusterType, d.Target, "")
		if err != nil {
			return err
		}
		d.Why = pipeline.WhyLines(d.Pair.Scheduling)
		for _, k := range sortedKeys(d.Pair.Values) {
			v := d.Pair.Values[k]
			row := provenanceRow{Key: k, Value: yamlnode.Text(v.Value), SetBy: v.Source.Kind + "/" + v.Source.Name,
				At: v.Source.File}
			if v.Source.Level != "" {
				row.SetBy += " (" + v.Source.Level + ")"
			}
			if v.Source.Line > 0 {
				row.At += ":" + itoa(v.Source.Line)
			}
			for _, sh := range v.Shadowed {
				row.Shadows = append(row.Shadows, sh.Source.Kind+"/"+sh.Source.Name+": "+yamlnode.Text(sh.Value))
			}
			d.Values = append(d.Values, row)
		}
	case d.Target != "":
		places, err := run.TargetPlaces(d.Target)
		if err != nil {
			return err
		}
		d.PlacesTitle = "Where could " + d.Target + " go? Every cluster type of " + d.Env
		for _, p := range places.ClusterTypes {
			d.Places = append(d.Places, placeRow{Name: p.ClusterType, Scheduled: p.Scheduled, Why: pipeline.WhyLines(p.Scheduling),
				Link: explainLink(d.Env, p.ClusterType, d.Target)})
		}
	default:
		places, err := run.ClusterTypePlaces(d.ClusterType)
		if err != nil {
			return err
		}
		d.PlacesTitle = "Every deployment target of " + d.Env + " on cluster type " + d.ClusterType
		for _, p := range places.DeploymentTargets {
			d.Places = append(d.Places, placeRow{Name: p.DeploymentTarget, Scheduled: p.Scheduled, Why: pipeline.WhyLines(p.Scheduling),
				Link: explainLink(d.Env, d.ClusterType, p.DeploymentTarget)})
		}
	}
	return nil
}

// explainLink is the explain page of a pair.
func explainLink(env, clusterType, target string) string {
	q := urlValues("env", env, "clusterType", clusterType, "target", target)
	return "/explain?" + q
}
