package ui

import (
	"context"
	"net/http"
	"strconv"
	"strings"

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
	if err == nil {
		data.Clusters, data.Pager, err = u.clusterPage(r, env, name)
	}
	if err == nil && len(data.Assignments) == 0 && data.Pager.Total == 0 {
		err = hub.Errorf(hub.CodeNotFound, "environment %q has no cluster type %q in its desired state or its clusters", env, name)
	}
	if err != nil {
		u.fail(w, r, s, err)
		return
	}
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
	return out, nil
}

// clusterPage reads the page of a cluster type's clusters the request asks for (the last
// one when it asks for more).
func (u *Handler) clusterPage(r *http.Request, env, name string) ([]hub.ClusterRecord, pager, error) {
	return u.searchPage(r, hub.ClusterFilter{Environment: env, ClusterType: name})
}

// searchPage reads the page of the clusters f selects that the request asks for (the last
// one when it asks for more).
func (u *Handler) searchPage(r *http.Request, f hub.ClusterFilter) ([]hub.ClusterRecord, pager, error) {
	size := u.opts.PageSize
	n, err := strconv.Atoi(r.URL.Query().Get("page"))
	if err != nil || n < 1 {
		n = 1
	}
	clusters, total, err := u.hub.SearchClusters(r.Context(), f, (n-1)*size, size)
	if err != nil {
		return nil, pager{}, err
	}
	_, _, p := paginate(r, total, size)
	if p.Page != n { // past the end: the last page
		clusters, _, err = u.hub.SearchClusters(r.Context(), f, (p.Page-1)*size, size)
	}
	return clusters, p, err
}

// clustersData is the cluster search page: the filter and a page of what it selects.
type clustersData struct {
	Envs     []string
	States   []string
	Filter   hub.ClusterFilter
	Label    string // KEY=VALUE, as typed
	Clusters []hub.ClusterRecord
	Pager    pager
}

// clusters finds clusters by part of their name, environment, state and label.
func (u *Handler) clusters(w http.ResponseWriter, r *http.Request, s session) {
	q := r.URL.Query()
	data := clustersData{Filter: hub.ClusterFilter{Name: strings.TrimSpace(q.Get("name")), Environment: q.Get("environment"), State: q.Get("state")},
		Label:  strings.TrimSpace(q.Get("label")),
		States: []string{string(hub.Compliant), string(hub.NonCompliant), string(hub.Progressing), string(hub.StateUnknown)}}
	if data.Label != "" {
		data.Filter.LabelKey, data.Filter.LabelValue, _ = strings.Cut(data.Label, "=")
	}
	var err error
	if data.Envs, err = u.environmentNames(r.Context()); err != nil {
		u.fail(w, r, s, err)
		return
	}
	if data.Clusters, data.Pager, err = u.searchPage(r, data.Filter); err != nil {
		u.fail(w, r, s, err)
		return
	}
	u.render(w, r, s, "clusters", "Clusters", "clusters", data)
}

func (u *Handler) cluster(w http.ResponseWriter, r *http.Request, s session) {
	c, err := u.hub.Cluster(r.Context(), r.PathValue("name"))
	if err != nil {
		u.fail(w, r, s, err)
		return
	}
	u.render(w, r, s, "cluster", "Cluster "+c.Name, "overview", c)
}
