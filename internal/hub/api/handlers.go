package api

import (
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/fleetform/fleetform/api/v1alpha1"
	"github.com/fleetform/fleetform/internal/access"
	"github.com/fleetform/fleetform/internal/hub"
)

// Writes.

func (a *Handler) registerCluster(w http.ResponseWriter, r *http.Request, _ hub.Principal) error {
	var req ClusterRegistration
	if err := a.decode(w, r, &req); err != nil {
		return err
	}
	rotate, err := boolParam(r.URL.Query(), "rotate")
	if err != nil {
		return err
	}
	tokens, err := a.hub.Register(r.Context(), []hub.Registration{registration(req)}, rotate)
	if err != nil {
		return err
	}
	return WriteJSON(w, http.StatusCreated, issued(req.Name, tokens[0], req.ExpiresAt))
}

// registration is the hub's registration of a request.
func registration(c ClusterRegistration) hub.Registration {
	return hub.Registration{Cluster: hub.Cluster{Name: c.Name, Environment: c.Environment, ClusterType: c.ClusterType,
		Labels: c.Labels}, TokenExpiresAt: timeOrZero(c.ExpiresAt)}
}

// registerClusters registers a batch; its body may be as large as a desired state.
func (a *Handler) registerClusters(w http.ResponseWriter, r *http.Request, _ hub.Principal) error {
	var req ClusterBatch
	if err := DecodeJSON(w, r, &req, a.opts.MaxDesiredBytes); err != nil {
		return err
	}
	rotate, err := boolParam(r.URL.Query(), "rotate")
	if err != nil {
		return err
	}
	rs := make([]hub.Registration, len(req.Clusters))
	for i, c := range req.Clusters {
		rs[i] = registration(c)
	}
	tokens, err := a.hub.Register(r.Context(), rs, rotate)
	if err != nil {
		return err
	}
	out := IssuedTokens{Clusters: make([]IssuedToken, len(rs))}
	for i, c := range req.Clusters {
		out.Clusters[i] = issued(c.Name, tokens[i], c.ExpiresAt)
	}
	return WriteJSON(w, http.StatusCreated, out)
}

func (a *Handler) postDesired(w http.ResponseWriter, r *http.Request, _ hub.Principal) error {
	var d hub.Desired
	if err := DecodeJSON(w, r, &d, a.opts.MaxDesiredBytes); err != nil {
		return err
	}
	if err := a.hub.PostDesired(r.Context(), d); err != nil {
		return err
	}
	return WriteJSON(w, http.StatusCreated, DesiredAccepted{Environment: d.Environment, Revision: d.Revision, Assignments: len(d.Assignments)})
}

func (a *Handler) postVersion(w http.ResponseWriter, r *http.Request, p hub.Principal) error {
	var v hub.WorkloadVersion
	if err := a.decode(w, r, &v); err != nil {
		return err
	}
	if _, err := a.decideWorkload(p, v.Environment, v.Workload); err != nil {
		return err
	}
	if err := a.checkVersionTarget(p, v); err != nil {
		return err
	}
	if err := a.hub.PostWorkloadVersion(r.Context(), v); err != nil {
		return err
	}
	return WriteJSON(w, http.StatusCreated, v)
}

func (a *Handler) postReport(w http.ResponseWriter, r *http.Request, p hub.Principal) error {
	var rep hub.Report
	if err := a.decode(w, r, &rep); err != nil {
		a.metrics.Reported(hub.ResultRejected)
		return err
	}
	if err := a.hub.Report(r.Context(), p, rep); err != nil {
		return err
	}
	return WriteJSON(w, http.StatusAccepted, ReportAccepted{Cluster: rep.Cluster, Accepted: true})
}

// postReports commits a batch of reports, each authenticated by its own cluster token; one
// report's problem is its own result, not the batch's.
func (a *Handler) postReports(w http.ResponseWriter, r *http.Request, _ hub.Principal) error {
	var req ReportBatch
	if err := DecodeJSON(w, r, &req, a.opts.MaxBatchBytes); err != nil {
		return err
	}
	if n := len(req.Reports); n == 0 || n > hub.MaxReportsPerBatch {
		return hub.Errorf(hub.CodeInvalid, "reports: want 1 to %d reports, got %d", hub.MaxReportsPerBatch, n)
	}
	signed := make([]hub.SignedReport, len(req.Reports))
	for i, s := range req.Reports {
		signed[i] = hub.SignedReport{Token: s.Token, Report: s.Report}
	}
	errs := a.hub.ReportMany(r.Context(), signed)
	out := ReportResults{Results: make([]ReportResult, len(errs))}
	for i, err := range errs {
		out.Results[i] = a.reportResult(r, signed[i].Report.Cluster, err)
	}
	return WriteJSON(w, http.StatusOK, out)
}

// approve records an approval by an identity the access policies allow to approve in the
// environment. The admin token records whom the request names; any other token is recorded
// as itself, with what the request names after it.
func (a *Handler) approve(w http.ResponseWriter, r *http.Request, p hub.Principal) error {
	var req Approval
	if err := a.decode(w, r, &req); err != nil {
		return err
	}
	actor, err := a.decide(p, access.Request{Action: v1alpha1.ActionApprove, Environments: []string{req.Environment}})
	if err != nil {
		return err
	}
	if id := p.Identity(); !id.Admin {
		by := id.Actor()
		if req.By != "" && req.By != by {
			by += ": " + req.By
		}
		req.By = by
	}
	ap := hub.Approval{Environment: req.Environment, Commit: req.Commit, By: req.By, Actor: actor}
	if a.opts.Approvals != nil {
		ap.Rule = a.opts.Approvals.ApprovalRule(req.Environment)
	}
	if err := a.hub.ApproveAs(r.Context(), ap); err != nil {
		return err
	}
	return WriteJSON(w, http.StatusCreated, req)
}

// confirmMassDeletion records that the mass deletion an environment's sync refused is
// intended: it needs override in the environment (or the admin token).
func (a *Handler) confirmMassDeletion(w http.ResponseWriter, r *http.Request, p hub.Principal) error {
	var req MassDeletion
	if err := a.decode(w, r, &req); err != nil {
		return err
	}
	env := r.PathValue("env")
	actor, err := a.decide(p, access.Request{Action: v1alpha1.ActionOverride, Environments: []string{env}})
	if err != nil {
		return err
	}
	c := hub.MassDeletionConfirmation{Environment: env, Commit: req.Commit, Reason: req.Reason, By: p.Identity().Actor(), Actor: actor}
	if err := a.hub.ConfirmMassDeletion(r.Context(), c); err != nil {
		return err
	}
	return WriteJSON(w, http.StatusCreated, req)
}

// recordEvent records a promotion decision of a command given --hub and the admin token:
// as the token's, unless the event names its actor.
func (a *Handler) recordEvent(w http.ResponseWriter, r *http.Request, p hub.Principal) error {
	var e hub.Event
	if err := a.decode(w, r, &e); err != nil {
		return err
	}
	switch id := p.Identity(); {
	case !id.Admin:
		// Anyone else records only the promotions and overrides its roles allow, as itself,
		// and now (the hub's clock): a history entry is not backdated.
		d, err := a.decideEvent(p, e)
		if err != nil {
			return err
		}
		e.Actor, e.Time = hub.ActorOf(id, d), a.hub.Now()
	case e.Actor == nil:
		e.Actor = hub.ActorOf(id, access.Decision{Allowed: true, Reason: id.String() + " is an admin token"})
	}
	if err := a.hub.Record(r.Context(), e); err != nil {
		return err
	}
	return WriteJSON(w, http.StatusCreated, e)
}

// Reads.

func (a *Handler) environments(w http.ResponseWriter, r *http.Request, _ hub.Principal) error {
	envs, err := a.hub.Environments(r.Context())
	if err != nil {
		return err
	}
	return WriteJSON(w, http.StatusOK, EnvironmentList{Environments: envs})
}

func (a *Handler) rollout(w http.ResponseWriter, r *http.Request, _ hub.Principal) error {
	ro, err := a.hub.Rollout(r.Context(), r.PathValue("env"))
	if err != nil {
		return err
	}
	return WriteJSON(w, http.StatusOK, ro)
}

func (a *Handler) source(w http.ResponseWriter, r *http.Request, _ hub.Principal) error {
	s, err := a.hub.Source(r.Context(), r.PathValue("env"))
	if err != nil {
		return err
	}
	return WriteJSON(w, http.StatusOK, s)
}

func (a *Handler) cluster(w http.ResponseWriter, r *http.Request, _ hub.Principal) error {
	c, err := a.hub.Cluster(r.Context(), r.PathValue("name"))
	if err != nil {
		return err
	}
	return WriteJSON(w, http.StatusOK, c)
}

func (a *Handler) approvals(w http.ResponseWriter, r *http.Request, _ hub.Principal) error {
	env, err := requiredParam(r.URL.Query(), "environment")
	if err != nil {
		return err
	}
	events, err := a.hub.Approvals(r.Context(), env)
	if err != nil {
		return err
	}
	return WriteJSON(w, http.StatusOK, ApprovalList{Environment: env, Approvals: events})
}

func (a *Handler) diff(w http.ResponseWriter, r *http.Request, _ hub.Principal) error {
	q := r.URL.Query()
	from, err := requiredParam(q, "from")
	if err != nil {
		return err
	}
	to, err := requiredParam(q, "to")
	if err != nil {
		return err
	}
	d, err := a.hub.Diff(r.Context(), from, to)
	if err != nil {
		return err
	}
	return WriteJSON(w, http.StatusOK, d)
}

func (a *Handler) history(w http.ResponseWriter, r *http.Request, _ hub.Principal) error {
	q := r.URL.Query()
	f := hub.HistoryFilter{Environment: q.Get("environment"), Workload: q.Get("workload"), ClusterType: q.Get("clusterType"),
		Cluster: q.Get("cluster"), Kind: q.Get("kind"), Actor: q.Get("actor"), Group: q.Get("group"), Revision: q.Get("revision")}
	var err error
	if f.Since, err = sinceParam(q, "since", time.Now()); err != nil {
		return err
	}
	if s := q.Get("limit"); s != "" {
		if f.Limit, err = strconv.Atoi(s); err != nil || f.Limit < 1 {
			return hub.Errorf(hub.CodeInvalid, "limit %q: want a positive number (at most %d)", s, hub.MaxHistoryLimit)
		}
	}
	events, err := a.hub.History(r.Context(), f)
	if err != nil {
		return err
	}
	return WriteJSON(w, http.StatusOK, HistoryList{Events: events})
}

func (a *Handler) drift(w http.ResponseWriter, r *http.Request, _ hub.Principal) error {
	q := r.URL.Query()
	env, err := requiredParam(q, "environment")
	if err != nil {
		return err
	}
	behind := a.opts.DriftAfter
	if s := q.Get("behind"); s != "" {
		if behind, err = time.ParseDuration(s); err != nil || behind < 0 {
			return hub.Errorf(hub.CodeInvalid, "behind %q: want a duration such as 10m", s)
		}
	}
	d, err := a.hub.Drift(r.Context(), env, behind)
	if err != nil {
		return err
	}
	return WriteJSON(w, http.StatusOK, d)
}

// sources answers the git sources fleetform serve polls.
func (a *Handler) sources(w http.ResponseWriter, r *http.Request, _ hub.Principal) error {
	srcs, err := a.hub.Sources(r.Context())
	if err != nil {
		return err
	}
	return WriteJSON(w, http.StatusOK, SourceList{Sources: srcs})
}

// latestSync answers an environment's latest sync by fleetform serve (404 when none).
func (a *Handler) latestSync(w http.ResponseWriter, r *http.Request, _ hub.Principal) error {
	s, err := a.hub.LatestSync(r.Context(), r.PathValue("env"))
	if err != nil {
		return err
	}
	return WriteJSON(w, http.StatusOK, s)
}

// Query parameters.

func requiredParam(q url.Values, name string) (string, error) {
	v := q.Get(name)
	if v == "" {
		return "", hub.Errorf(hub.CodeInvalid, "query parameter %s is required", name)
	}
	return v, nil
}

func boolParam(q url.Values, name string) (bool, error) {
	s := q.Get(name)
	if s == "" {
		return false, nil
	}
	b, err := strconv.ParseBool(s)
	if err != nil {
		return false, hub.Errorf(hub.CodeInvalid, "query parameter %s=%q: want true or false", name, s)
	}
	return b, nil
}

// sinceParam reads a time: RFC 3339, or a duration before now ("24h").
func sinceParam(q url.Values, name string, now time.Time) (time.Time, error) {
	s := q.Get(name)
	if s == "" {
		return time.Time{}, nil
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	if d, err := time.ParseDuration(s); err == nil && d >= 0 {
		return now.Add(-d), nil
	}
	return time.Time{}, hub.Errorf(hub.CodeInvalid, "query parameter %s=%q: want an RFC 3339 time or a duration such as 24h", name, s)
}
