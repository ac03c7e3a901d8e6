package api

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/fleetform/fleetform/api/v1alpha1"
	"github.com/fleetform/fleetform/internal/access"
	"github.com/fleetform/fleetform/internal/hub"
)

// WhoAmI answers GET /api/v1/whoami: who the caller is, the roles the access policies give
// it, and, when the query names an action, whether it may do it.
type WhoAmI struct {
	Identity access.Identity `json:"identity"`
	Roles    []string        `json:"roles"`
	// Policies is set when the control plane has access policies in force.
	Policies bool `json:"policies"`
	// Decision answers ?action=...&environment=...&workspace=...&workload=...&platform=true.
	Decision *access.Decision `json:"decision,omitempty"`
}

// WhoAmIQuery asks whether the caller may do an action (GET /api/v1/whoami's query).
type WhoAmIQuery struct {
	Action       string
	Environments []string
	Workspaces   []string
	// Workloads stand for their workspaces in each environment, as the hub last read them.
	Workloads []string
	Platform  bool
}

// workspaceLookup knows each environment's workloads' workspaces (*access.Rights).
type workspaceLookup interface {
	WorkspaceOf(env, workload string) string
}

// targetLookup knows whose each environment's deployment targets are (*access.Rights).
type targetLookup interface {
	WorkloadOfTarget(env, target string) string
}

// checkVersionTarget refuses a version that a caller other than the admin token records for
// a deployment target that is not its workload's: the version's row is the target's, and
// a team's CI must not replace another team's. A target is named <workload>-<name>; the
// known workload with the longest such name owns it.
func (a *Handler) checkVersionTarget(p hub.Principal, v hub.WorkloadVersion) error {
	if p.Kind == hub.TokenAdmin {
		return nil
	}
	owner := v.Workload
	if l, ok := a.opts.Rights.(targetLookup); ok {
		if known := l.WorkloadOfTarget(v.Environment, v.DeploymentTarget); known != "" {
			owner = known
		}
	}
	if owner != v.Workload || !strings.HasPrefix(v.DeploymentTarget, v.Workload+"-") {
		return hub.Errorf(hub.CodeForbidden, "deployment target %q is not one of workload %s's (its targets are named %s-<name>): "+
			"record the version under the workload the target belongs to", v.DeploymentTarget, v.Workload, v.Workload)
	}
	return nil
}

// MaxWhoAmIValues bounds the environments, workspaces and workloads one whoami asks about.
const MaxWhoAmIValues = 64

func (a *Handler) whoami(w http.ResponseWriter, r *http.Request, p hub.Principal) error {
	id := p.Identity()
	out := WhoAmI{Identity: id, Roles: a.opts.Rights.Roles(id)}
	if e, ok := a.opts.Rights.(interface{ Enforced() bool }); ok {
		out.Policies = e.Enforced()
	}
	if out.Roles == nil {
		out.Roles = []string{}
	}
	q := r.URL.Query()
	for _, name := range []string{"environment", "workspace", "workload"} {
		if n := len(q[name]); n > MaxWhoAmIValues {
			return hub.Errorf(hub.CodeInvalid, "%d values of %s: ask about at most %d at once", n, name, MaxWhoAmIValues)
		}
	}
	if action := q.Get("action"); action != "" {
		req := access.Request{Action: action, Environments: q["environment"], Workspaces: q["workspace"]}
		if v := q.Get("platform"); v != "" {
			b, err := strconv.ParseBool(v)
			if err != nil {
				return hub.Errorf(hub.CodeInvalid, "platform=%q: want true or false", v)
			}
			req.Platform = b
		}
		for _, wl := range q["workload"] {
			for _, env := range req.Environments {
				if ws := a.workspaceOf(env, wl); ws != "" {
					req.Workspaces = append(req.Workspaces, ws)
				}
			}
		}
		d := a.opts.Rights.Decide(id, req)
		out.Decision = &d
	}
	return WriteJSON(w, http.StatusOK, out)
}

// decideEvent decides whether p, not the admin token, may record e: a promotion (of a
// workload: for its workspace) needs promote in its environment, an override needs
// override there; other events need the admin token.
func (a *Handler) decideEvent(p hub.Principal, e hub.Event) (access.Decision, error) {
	id := p.Identity()
	switch {
	case e.Kind == hub.EventPromotion && e.Workload != "":
		return a.decideWorkload(p, e.Environment, e.Workload)
	case e.Kind == hub.EventPromotion || e.Kind == hub.EventOverride:
		action := v1alpha1.ActionPromote
		if e.Kind == hub.EventOverride {
			action = v1alpha1.ActionOverride
		}
		d := a.opts.Rights.Decide(id, access.Request{Action: action, Environments: []string{e.Environment}})
		if !d.Allowed {
			return d, hub.Errorf(hub.CodeForbidden, "%s", d.Reason)
		}
		return d, nil
	}
	return access.Decision{}, hub.Errorf(hub.CodeForbidden, "%s may record only the promotions and overrides its roles allow; %s events need the admin token", id, e.Kind)
}

// decideWorkload decides a promotion of workload into env (an app promotion, or the versions
// it deployed): the admin token may; anyone else needs promote in env for the workload's
// workspace. It returns the decision, or a forbidden error with its reason.
func (a *Handler) decideWorkload(p hub.Principal, env, workload string) (access.Decision, error) {
	req := access.Request{Action: v1alpha1.ActionPromote, Environments: []string{env}}
	if ws := a.workspaceOf(env, workload); ws != "" {
		req.Workspaces = []string{ws}
	}
	d := a.opts.Rights.Decide(p.Identity(), req)
	if !d.Allowed {
		return d, hub.Errorf(hub.CodeForbidden, "%s", d.Reason)
	}
	return d, nil
}

func (a *Handler) workspaceOf(env, workload string) string {
	if l, ok := a.opts.Rights.(workspaceLookup); ok {
		return l.WorkspaceOf(env, workload)
	}
	return ""
}
