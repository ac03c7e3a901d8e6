package ui

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"regexp"
	"strings"

	"github.com/fleetform/fleetform/api/v1alpha1"
	"github.com/fleetform/fleetform/internal/access"
	"github.com/fleetform/fleetform/internal/authoring"
	"github.com/fleetform/fleetform/internal/hub"
)

// Changes makes control-plane changes for the authoring pages: serve's, which validates,
// plans, commits (or opens a pull request) and records who did it. Without it the pages say
// that authoring needs `fleetform serve`.
type Changes interface {
	// Change makes (or with dryRun only validates and plans) a change for id, if its access
	// policies allow what the change touches (else an access.DeniedError).
	Change(ctx context.Context, ops []authoring.Operation, dryRun bool, id access.Identity) (*authoring.Result, error)
}

// Proposer proposes changes as pull requests for those who may not make them (serve's
// ControlPlaneChanges): the platform team reviews and merges them.
type Proposer interface {
	CanPropose() bool
	Propose(ctx context.Context, ops []authoring.Operation, dryRun bool, id access.Identity) (*authoring.Result, error)
}

// Onboarder prepares what a new cluster needs (serve's ControlPlaneChanges): no token, which
// never appears in a page.
type Onboarder interface {
	ClusterManifests(ctx context.Context, name, env, clusterType, reconciler, hubURL string) (*authoring.ClusterBootstrap, error)
}

// SetChanges enables the authoring pages (before the handler serves requests).
func (u *Handler) SetChanges(c Changes) { u.opts.Changes = c }

// selectorRows is how many rows each selector builder offers.
const selectorRows = 3

// authorForm is what the authoring page offers.
type authorForm struct {
	Envs    []string
	Enabled bool
	Rows    []int
	// ProposeOnly is set when the identity may not author anything but may propose.
	ProposeOnly bool
	// Form and Values are a refused form (its "form" field) and what was typed in it, shown
	// again with Problem and Errors (why it was refused) so that nothing typed is lost.
	Form    string
	Values  url.Values
	Problem string
	Errors  []string
	// Prefilled is set when Form's Values are an object's current values to edit (not a
	// refused form).
	Prefilled bool
}

// V returns what was typed in field name of form, or def when that form is not the one
// shown again.
func (d authorForm) V(form, name, def string) string {
	if d.Form != form {
		return def
	}
	return d.Values.Get(name)
}

// Refused reports whether form is the one refused.
func (d authorForm) Refused(form string) bool { return d.Form == form && !d.Prefilled }

// proposer is the Changes' Proposer when proposals can be made (nil otherwise).
func (u *Handler) proposer() Proposer {
	if p, ok := u.opts.Changes.(Proposer); ok && p.CanPropose() {
		return p
	}
	return nil
}

// mayChange reports whether the session may use the Change pages: to make changes its
// roles allow, or to propose any as a pull request.
func (u *Handler) mayChange(s session) bool {
	return u.canAuthor(s) || (s.principal.Kind != "" && u.proposer() != nil)
}

// mayNotChange says why the session may not use the Change pages: the access policies'
// reason, which names the identity and what it may not do.
func (u *Handler) mayNotChange(s session) string {
	reason := u.permit(s, access.Request{Action: v1alpha1.ActionAuthor})
	if reason == "" {
		reason = s.identity().String() + " may not author anything"
	}
	return "changing the platform needs the admin token or a role that may author: " + reason
}

func (u *Handler) author(w http.ResponseWriter, r *http.Request, s session) {
	if !u.mayChange(s) {
		u.renderError(w, s, http.StatusForbidden, u.mayNotChange(s))
		return
	}
	data, err := u.authorData(r, s)
	if err != nil {
		u.fail(w, r, s, err)
		return
	}
	if q := r.URL.Query(); q.Get("edit") != "" {
		if err := u.prefill(r.Context(), &data, q); err != nil {
			u.fail(w, r, s, err)
			return
		}
	}
	u.render(w, r, s, "author", "Change the platform", "author", data)
}

// prefill fills the form q names (edit=FORM) to change an object: the fields that say
// which object from q, the values to edit from the control plane (never from the link).
func (u *Handler) prefill(ctx context.Context, d *authorForm, q url.Values) error {
	pick := func(fields ...string) url.Values {
		v := url.Values{}
		for _, f := range fields {
			if x := q.Get(f); x != "" {
				v.Set(f, x)
			}
		}
		return v
	}
	switch form := q.Get("edit"); form {
	case "labels":
		if err := u.prefillLabels(ctx, d, q.Get("kind"), q.Get("env"), q.Get("name")); err != nil {
			return err
		}
	case "remove":
		d.Values = pick("kind", "name", "env", "workload")
	case "unset-config":
		d.Values = pick("env", "level", "at", "key")
	case "config":
		d.Values = pick("env", "level", "at", "key")
		value, err := u.currentConfig(ctx, q)
		if err != nil {
			return err
		}
		d.Values.Set("value", value)
	default:
		return hub.Errorf(hub.CodeInvalid, "edit=%s: no such form (labels, config, unset-config, remove)", form)
	}
	d.Form, d.Prefilled = q.Get("edit"), true
	return nil
}

// levelLabelsOf are the labels of the ConfigMap of q's precedence level, when q names one.
func levelLabelsOf(q url.Values) (map[string]string, bool) {
	op, err := configOperation(q.Get)
	if err != nil {
		return nil, false
	}
	labels, _, err := authoring.LevelLabels(op.Scope)
	return labels, err == nil
}

// currentConfig is the value of q's key set at q's precedence level in q's environment
// ("" when it is set at no such level), read from the control plane (under serve).
func (u *Handler) currentConfig(ctx context.Context, q url.Values) (string, error) {
	labels, ok := levelLabelsOf(q)
	if !ok || u.opts.Scheduler == nil {
		return "", nil // a link to a level that cannot be read prefills no value; the preview says what is wrong
	}
	run, err := u.opts.Scheduler.Schedule(ctx, q.Get("env"))
	if err != nil {
		return "", err
	}
	var value, at string
	for _, cm := range run.Snapshot.ConfigMaps {
		if v, ok := cm.Data[q.Get("key")]; ok && maps.Equal(cm.Metadata.Labels, labels) && cm.Metadata.Name >= at {
			value, at = v, cm.Metadata.Name // the last by name, as authoring edits it
		}
	}
	return value, nil
}

// prefillLabels fills the labels form with the current labels of a cluster type of env or
// of a workload, read from the control plane (under serve).
func (u *Handler) prefillLabels(ctx context.Context, d *authorForm, kind, env, name string) error {
	if u.opts.Scheduler == nil {
		return nil
	}
	run, err := u.opts.Scheduler.Schedule(ctx, env)
	if err != nil {
		return err
	}
	var labels map[string]string
	found := false
	switch kind {
	case "cluster-type":
		for _, ct := range run.Snapshot.ClusterTypes {
			if ct.Metadata.Name == name {
				labels, found = ct.Metadata.Labels, true
			}
		}
	case "workload":
		for _, w := range run.Snapshot.Workloads {
			if w.Metadata.Name == name {
				labels, found = w.Metadata.Labels, true
			}
		}
	}
	if !found {
		return hub.Errorf(hub.CodeNotFound, "%s %q is not in environment %s", kind, name, env)
	}
	pairs := make([]string, 0, len(labels))
	for _, k := range sortedKeys(labels) {
		pairs = append(pairs, k+"="+labels[k])
	}
	d.Values = url.Values{"kind": {kind}, "env": {env}, "name": {name}, "labels": {strings.Join(pairs, ", ")}}
	return nil
}

// authorData is the forms' page.
func (u *Handler) authorData(r *http.Request, s session) (authorForm, error) {
	envs, err := u.environmentNames(r.Context())
	if err != nil {
		return authorForm{}, err
	}
	data := authorForm{Enabled: u.opts.Changes != nil, ProposeOnly: !u.canAuthor(s), Envs: envs}
	for i := range selectorRows {
		data.Rows = append(data.Rows, i)
	}
	return data, nil
}

// refused shows the forms' page again with the refused form as it was filled in and why it
// was refused, with status.
func (u *Handler) refused(w http.ResponseWriter, r *http.Request, s session, status int, res authorResult) {
	data, err := u.authorData(r, s)
	if err != nil {
		u.fail(w, r, s, err)
		return
	}
	data.Form, data.Values, data.Problem = r.PostForm.Get("form"), r.PostForm, res.Problem
	if res.Result != nil {
		for _, e := range res.Result.Errors {
			data.Errors = append(data.Errors, e.Error())
		}
	}
	u.renderStatus(w, r, s, status, "author", "Change the platform", "author", data)
}

// authorResult is a change's validation, plan, files and, once made, its commits.
type authorResult struct {
	Op       string
	Result   *authoring.Result
	Problem  string
	Proposed bool
	// Proposal is set when the change is to be proposed as a pull request (the identity
	// may not make it, or asked to propose it).
	Proposal bool
	// Fields are the form's values, carried to the commit form.
	Fields []field
}

type field struct{ Name, Value string }

// preview validates and plans the change of the posted form, writing nothing.
func (u *Handler) preview(w http.ResponseWriter, r *http.Request, s session) { u.change(w, r, s, true) }

// commit makes the change of the posted form.
func (u *Handler) commit(w http.ResponseWriter, r *http.Request, s session) { u.change(w, r, s, false) }

// propose proposes the change of the posted form as a pull request.
func (u *Handler) propose(w http.ResponseWriter, r *http.Request, s session) {
	p := u.proposer()
	if p == nil || !u.mayChange(s) {
		u.renderError(w, s, http.StatusNotFound, "proposing a change needs fleetform serve with a forge for its control plane")
		return
	}
	op, err := operationOf(r.PostForm)
	data := authorResult{Fields: formFields(r.PostForm), Proposal: true}
	var status int
	if err != nil {
		data.Problem, status = err.Error(), http.StatusBadRequest
	} else {
		data.Op = op.Describe()
		data.Result, err = p.Propose(r.Context(), []authoring.Operation{op}, false, s.identity())
		data.Problem, status = u.changeProblem(err)
	}
	title := "Change proposed"
	if data.Problem != "" {
		title = "Change not proposed"
	}
	u.renderStatus(w, r, s, status, "change", title, "author", data)
}

func (u *Handler) change(w http.ResponseWriter, r *http.Request, s session, dryRun bool) {
	if !u.mayChange(s) {
		u.renderError(w, s, http.StatusForbidden, u.mayNotChange(s))
		return
	}
	if u.opts.Changes == nil {
		u.renderError(w, s, http.StatusNotFound, "authoring needs fleetform serve (it knows the control plane)")
		return
	}
	op, err := operationOf(r.PostForm)
	data := authorResult{Proposed: dryRun, Fields: formFields(r.PostForm)}
	status := http.StatusOK
	if err != nil {
		data.Problem, status = err.Error(), http.StatusBadRequest
	} else {
		data.Op = op.Describe()
		data.Result, err = u.opts.Changes.Change(r.Context(), []authoring.Operation{op}, dryRun, s.identity())
		var forbidden *access.DeniedError
		if p := u.proposer(); dryRun && errors.As(err, &forbidden) && p != nil {
			// Not theirs to make: planned as a proposal the platform team reviews.
			data.Proposal = true
			data.Result, err = p.Propose(r.Context(), []authoring.Operation{op}, true, s.identity())
			if err == nil {
				data.Problem = "you may not make this change yourself (" + forbidden.Error() + "): propose it as a pull request for review"
			}
		}
		if err != nil {
			var he *hub.Error
			if errors.As(err, &he) {
				u.fail(w, r, s, err)
				return
			}
			data.Problem, status = u.changeProblem(err)
		}
	}
	if !data.Proposal && (status == http.StatusBadRequest || status == http.StatusUnprocessableEntity) {
		u.refused(w, r, s, status, data) // the form again, as it was filled in, with why
		return
	}
	title := "Proposed change"
	if !dryRun {
		title = "Change made"
		if data.Problem != "" {
			title = "Change not made"
		}
	}
	u.renderStatus(w, r, s, status, "change", title, "author", data)
}

// changeProblem says why a change was not made, with its status ("" and 200 when it was).
func (u *Handler) changeProblem(err error) (string, int) {
	var forbidden *access.DeniedError
	switch {
	case err == nil:
		return "", http.StatusOK
	case errors.As(err, &forbidden):
		return "the change is refused: " + forbidden.Error() + " (nothing was written)", http.StatusForbidden
	case errors.Is(err, authoring.ErrInvalid):
		return "the change is refused: it would make the control plane invalid (nothing was written)", http.StatusUnprocessableEntity
	case errors.Is(err, authoring.ErrConflict):
		return err.Error(), http.StatusConflict
	}
	return "the change could not be made: " + credentialFree(err.Error()), http.StatusBadRequest
}

// urlCredentials matches the user-info part of a URL.
var urlCredentials = regexp.MustCompile(`([a-z][a-z0-9+.-]*://)[^/@\s]+@`)

// credentialFree drops credentials from URLs in a message.
func credentialFree(s string) string { return urlCredentials.ReplaceAllString(s, "$1") }

// formFields are the posted fields to carry to the commit form (not the CSRF token).
func formFields(form url.Values) []field {
	var out []field
	for _, k := range sortedKeys(form) {
		if k == csrfField {
			continue
		}
		for _, v := range form[k] {
			out = append(out, field{Name: k, Value: v})
		}
	}
	return out
}

// operationOf builds the operation of a posted authoring form (its "form" field names it).
func operationOf(f url.Values) (authoring.Operation, error) {
	get := func(k string) string { return strings.TrimSpace(f.Get(k)) }
	switch get("form") {
	case "workload":
		return authoring.AddWorkload(get("name"), get("workspace"), labelsOf(get("labels")), get("target"), get("env"),
			get("repo"), get("branch"), get("path"), labelsOf(get("target_labels")))
	case "cluster-type":
		return authoring.AddClusterType(get("name"), get("env"), labelsOf(get("labels")), get("reconciler"), "", ""), nil
	case "policy":
		targets, err := selectorOf(f, "targets")
		if err != nil {
			return authoring.Operation{}, err
		}
		types, err := selectorOf(f, "types")
		if err != nil {
			return authoring.Operation{}, err
		}
		return authoring.AddPolicy(get("name"), get("env"), get("workspace"), targets, types)
	case "config":
		return configOperation(get)
	case "unset-config":
		op, err := configOperation(get)
		op.Op, op.Keys, op.Data = authoring.OpUnset, []string{get("key")}, nil
		return op, err
	case "registration":
		return authoring.AddRegistration(get("name"), get("repo"), get("branch"), get("path"), get("workspace")), nil
	case "labels":
		kind, err := authoring.ParseKind(get("kind"))
		if err != nil {
			return authoring.Operation{}, err
		}
		return authoring.Operation{Op: authoring.OpSet, Kind: kind, Name: get("name"), Env: envOf(kind, get("env")), Labels: labelsOf(get("labels"))}, nil
	case "remove":
		kind, err := authoring.ParseKind(get("kind"))
		if err != nil {
			return authoring.Operation{}, err
		}
		return authoring.Remove(kind, get("name"), envOf(kind, get("env")), get("workload")), nil
	}
	return authoring.Operation{}, fmt.Errorf("unknown form %q", get("form"))
}

// envOf is the environment an operation on kind names: none for the kinds that belong to no
// environment (workloads, registrations).
func envOf(kind, env string) string {
	switch kind {
	case v1alpha1.KindWorkload, v1alpha1.KindWorkloadRegistration, v1alpha1.KindEnvironment:
		return ""
	}
	return env
}

// configOperation sets one config value at the chosen precedence level.
func configOperation(get func(string) string) (authoring.Operation, error) {
	scope := &authoring.ConfigScope{}
	switch level, at := get("level"), get("at"); level {
	case "environment":
		scope.EnvironmentWide = true
	case "cluster-type":
		scope.ClusterType = at
	case "workload":
		scope.Workload = at
	case "deployment-target":
		scope.DeploymentTarget = at
	case "selector":
		scope.Selector = at
	default:
		return authoring.Operation{}, fmt.Errorf("unknown precedence level %q", level)
	}
	key := get("key")
	if key == "" {
		return authoring.Operation{}, errors.New("the config key is empty")
	}
	return authoring.Operation{Op: authoring.OpSet, Kind: "ConfigMap", Env: get("env"), Scope: scope,
		Data: map[string]any{key: get("value")}}, nil
}

// selectorOf is a selector builder's kubectl selector: its text field when filled, else
// its rows.
func selectorOf(f url.Values, prefix string) (string, error) {
	if text := strings.TrimSpace(f.Get(prefix + "_text")); text != "" {
		return text, nil
	}
	var reqs []authoring.Requirement
	for i := range selectorRows {
		n := fmt.Sprint(i)
		reqs = append(reqs, authoring.Requirement{Key: f.Get(prefix + "_key_" + n), Operator: f.Get(prefix + "_op_" + n),
			Values: f.Get(prefix + "_values_" + n)})
	}
	return authoring.SelectorText(reqs)
}

// labelsOf reads "k=v, k2=v2" (nil when empty; a pair without = keeps its text as the key,
// which validation refuses with its own message).
func labelsOf(s string) map[string]string {
	if strings.TrimSpace(s) == "" {
		return nil
	}
	out := map[string]string{}
	for _, pair := range strings.Split(s, ",") {
		k, v, _ := strings.Cut(strings.TrimSpace(pair), "=")
		if k != "" {
			out[strings.TrimSpace(k)] = strings.TrimSpace(v)
		}
	}
	return out
}

// onboardData is a new cluster's manifests to copy, without its token.
type onboardData struct {
	Name, Env, ClusterType, Reconciler string
	Manifests, Problem                 string
	Command                            string
	Notes                              []string
}

// onboardCluster shows what a new cluster needs; registering it (and its token) stays
// `fleetform onboard cluster`, so that no secret is ever in a page.
func (u *Handler) onboardCluster(w http.ResponseWriter, r *http.Request, s session) {
	if reason := u.permit(s, access.Request{Action: v1alpha1.ActionAuthor, Platform: true}); reason != "" {
		u.renderError(w, s, http.StatusForbidden, "onboarding a cluster is the platform's: "+reason)
		return
	}
	on, ok := u.opts.Changes.(Onboarder)
	if !ok {
		u.renderError(w, s, http.StatusNotFound, "onboarding needs fleetform serve (it knows the control plane)")
		return
	}
	get := func(k string) string { return strings.TrimSpace(r.PostFormValue(k)) }
	d := onboardData{Name: get("name"), Env: get("env"), ClusterType: get("cluster_type"), Reconciler: get("reconciler")}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	hubURL := scheme + "://" + r.Host
	d.Command = "fleetform onboard cluster " + d.Name + " --env " + d.Env + " --cluster-type " + d.ClusterType + " --hub " + hubURL
	if d.Reconciler != "" {
		d.Command += " --reconciler " + d.Reconciler
	}
	d.Command += " | kubectl apply -f -"
	status := http.StatusOK
	b, err := on.ClusterManifests(r.Context(), d.Name, d.Env, d.ClusterType, d.Reconciler, hubURL)
	if err == nil {
		d.Notes = b.Notes
	}
	if err == nil && b.Reconciler == authoring.ReconcilerHost {
		d.Manifests = b.Script()
	} else if err == nil {
		var y []byte
		y, err = b.YAML()
		d.Manifests = string(y)
	}
	if err != nil {
		d.Problem, status = credentialFree(err.Error()), http.StatusBadRequest
	}
	u.renderStatus(w, r, s, status, "onboard", "Onboard cluster "+d.Name, "author", d)
}
