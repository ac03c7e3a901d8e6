package ui

import (
	"context"
	"net/http"

	"github.com/fleetform/fleetform/internal/hub"
)

// assignmentView is a deployment target on a cluster type, with its composed configuration.
type assignmentView struct {
	Workload, DeploymentTarget, Namespace string
	Counts                                counts
	Config                                []configValue
	Waiting                               []string
}

type clusterTypeData struct {
	Env, Name, Revision string
	Assignments         []assignmentView
	Clusters            []hub.ClusterRecord
	Pager               pager
}

func (u *Handler) clusterType(w http.ResponseWriter, r *http.Request, s session) {
	env, name := r.PathValue("env"), r.PathValue("name")
	data, err := u.clusterTypeData(r.Context(), env, name)
	if err != nil {
		u.fail(w, r, s, err)
		return
	}
	lo, hi, p := paginate(r, len(data.Clusters), u.opts.PageSize)
	data.Clusters, data.Pager = data.Clusters[lo:hi], p
	u.render(w, r, s, "clustertype", "Cluster type "+name+" in "+env, "overview", data)
}

func (u *Handler) clusterTypeData(ctx context.Context, env, name string) (clusterTypeData, error) {
	out := clusterTypeData{Env: env, Name: name}
	ro, d, err := u.hub.DesiredRollout(ctx, env)
	if err != nil {
		return out, err
	}
	out.Revision = ro.Revision
	counted := map[string]counts{}
	for _, t := range ro.Targets {
		if t.ClusterType == name {
			counted[t.DeploymentTarget] = targetCounts(t)
		}
	}
	for _, a := range d.Assignments {
		if a.ClusterType == name {
			out.Assignments = append(out.Assignments, assignmentView{Workload: a.Workload, DeploymentTarget: a.DeploymentTarget,
				Namespace: a.Namespace, Counts: counted[a.DeploymentTarget], Config: configValues(a.Config), Waiting: a.Waiting})
		}
	}
	clusters, err := u.hub.Clusters(ctx, env)
	if err != nil {
		return out, err
	}
	for _, c := range clusters {
		if c.ClusterType == name {
			out.Clusters = append(out.Clusters, c)
		}
	}
	if len(out.Assignments) == 0 && len(out.Clusters) == 0 {
		return out, hub.Errorf(hub.CodeNotFound, "environment %q has no cluster type %q in its desired state or its clusters", env, name)
	}
	return out, nil
}

func (u *Handler) cluster(w http.ResponseWriter, r *http.Request, s session) {
	c, err := u.hub.Cluster(r.Context(), r.PathValue("name"))
	if err != nil {
		u.fail(w, r, s, err)
		return
	}
	u.render(w, r, s, "cluster", "Cluster "+c.Name, "overview", c)
}
