package ui

import (
	"context"
	"net/http"
	"net/url"
	"strings"

	"github.com/fleetform/fleetform/api/v1alpha1"
	"github.com/fleetform/fleetform/internal/access"
	"github.com/fleetform/fleetform/internal/hub"
	"github.com/fleetform/fleetform/internal/promote"
)

// Promotions is the promotion use case behind the promotions page (serve's): the chain's
// gates checked now, and a promotion an admin asks for. Without it the page shows what the
// hub recorded.
type Promotions interface {
	Review(ctx context.Context) ([]promote.Status, error)
	// Promote promotes into env for actor (by: who, with the access decision's reason, for
	// the history), overriding unmet gates when override is set (reason is then required).
	Promote(ctx context.Context, env, actor, reason string, override bool, by *hub.Actor) (promote.Result, error)
}

// SetPromotions enables the gates and the promote form (before the handler serves requests).
func (u *Handler) SetPromotions(p Promotions) { u.opts.Promotions = p }

// stage is an environment of the promotion chain as the promotions page shows it.
type stage struct {
	envState
	Approvals []hub.Event
	// Candidate is the commit waiting to be promoted into it ("" when none is waiting).
	Candidate string
	// Status is its gates checked now (nil without the control plane).
	Status  *promote.Status
	Freezes []string
	// CanApprove, CanPromote and CanOverride say which forms the signed-in identity is
	// offered (the server decides each request again).
	CanApprove, CanPromote, CanOverride bool
}

type promotionsData struct {
	// Levels are the chain's environments grouped by distance from its start: rings of
	// one level side by side.
	Levels [][]stage
	Done   string
	// Live is set when the gates were checked now against the control plane.
	Live    bool
	Problem string
}

func (u *Handler) promotions(w http.ResponseWriter, r *http.Request, s session) {
	data, err := u.promotionsData(r.Context())
	if err != nil {
		u.fail(w, r, s, err)
		return
	}
	data.Done = r.URL.Query().Get("done")
	for _, level := range data.Levels {
		for i := range level {
			st := &level[i]
			in := func(action string) bool {
				return u.permit(s, access.Request{Action: action, Environments: []string{st.Name}}) == ""
			}
			st.CanApprove, st.CanPromote, st.CanOverride = in(v1alpha1.ActionApprove), in(v1alpha1.ActionPromote), in(v1alpha1.ActionOverride)
		}
	}
	u.render(w, r, s, "promotions", "Promotions", "promotions", data)
}

func (u *Handler) promotionsData(ctx context.Context) (promotionsData, error) {
	var out promotionsData
	envs, err := u.environments(ctx)
	if err != nil {
		return out, err
	}
	statuses := map[string]*promote.Status{}
	if u.opts.Promotions != nil {
		review, err := u.opts.Promotions.Review(ctx)
		if err != nil {
			out.Problem = "the gates could not be checked: " + credentialFree(err.Error())
		}
		for i := range review {
			statuses[review[i].Gates.Environment] = &review[i]
		}
		out.Live = err == nil
	}
	from := map[string]string{}
	for _, env := range envs {
		from[env.name] = env.from
	}
	for _, env := range envs {
		st, _, err := u.environmentColumn(ctx, env.name, env.from)
		if err != nil {
			return out, err
		}
		sg := stage{envState: st}
		if sg.Approvals, err = u.hub.Approvals(ctx, env.name); err != nil {
			return out, err
		}
		sg.Approvals = sg.Approvals[:min(5, len(sg.Approvals))]
		if st.Decision != nil && !st.Decision.Promoted {
			sg.Candidate = st.Decision.Commit
		}
		if status := statuses[env.name]; status != nil {
			sg.Status, sg.Freezes = status, status.Gates.Freezes()
			if status.Candidate != "" && len(status.Unmet) > 0 {
				sg.Candidate = status.Candidate
			}
		}
		l := chainDepth(env.name, from)
		for len(out.Levels) <= l {
			out.Levels = append(out.Levels, nil)
		}
		out.Levels[l] = append(out.Levels[l], sg)
	}
	return out, nil
}

// chainDepth is how many promotions separate env from the start of its chain, following
// the declared from links (whatever order the environments come in; a link to an unknown
// environment, or a cycle, ends the walk).
func chainDepth(env string, from map[string]string) int {
	depth := 0
	seen := map[string]bool{env: true}
	for {
		src := from[env]
		if _, known := from[src]; src == "" || !known || seen[src] {
			return depth
		}
		seen[src] = true
		env = src
		depth++
	}
}

// approve records an approval of a commit for an environment, as `fleetform approve` does,
// by an identity its access policies allow to approve there.
func (u *Handler) approve(w http.ResponseWriter, r *http.Request, s session) {
	env, commit := r.PostFormValue("environment"), strings.TrimSpace(r.PostFormValue("commit"))
	actor, denied := u.decide(s, access.Request{Action: v1alpha1.ActionApprove, Environments: []string{env}})
	if denied != "" {
		u.renderError(w, s, http.StatusForbidden, denied)
		return
	}
	by := s.identity().Actor()
	if reason := strings.TrimSpace(r.PostFormValue("reason")); reason != "" {
		by += ": " + reason
	}
	a := hub.Approval{Environment: env, Commit: commit, By: by, Actor: actor, Rule: u.opts.Approvals.ApprovalRule(env)}
	if err := u.hub.ApproveAs(r.Context(), a); err != nil {
		u.fail(w, r, s, err)
		return
	}
	http.Redirect(w, r, "/promotions?done="+url.QueryEscape("approval recorded for "+env), http.StatusSeeOther) //nolint:gosec // a path on this server
}

// promoteNow promotes into an environment, as `fleetform promote` does: through the gates,
// or overriding them with the reason (recorded), for an identity its access policies allow
// to promote (and to override) there.
func (u *Handler) promoteNow(w http.ResponseWriter, r *http.Request, s session) {
	if u.opts.Promotions == nil {
		u.renderError(w, s, http.StatusNotFound, "promoting from here needs fleetform serve (it knows the control plane)")
		return
	}
	env, reason := r.PostFormValue("environment"), strings.TrimSpace(r.PostFormValue("reason"))
	override := r.PostFormValue("override") == "on"
	actions := []string{v1alpha1.ActionPromote}
	if override {
		actions = append(actions, v1alpha1.ActionOverride)
	}
	var by *hub.Actor
	for _, action := range actions {
		actor, denied := u.decide(s, access.Request{Action: action, Environments: []string{env}})
		if denied != "" {
			u.renderError(w, s, http.StatusForbidden, denied)
			return
		}
		if by != nil { // promote and override: both decisions are recorded
			actor.Reason = by.Reason + "; " + actor.Reason
			actor.Roles = append(by.Roles, actor.Roles...)
		}
		by = actor
	}
	if reason == "" {
		u.renderError(w, s, http.StatusBadRequest, "a promotion from here needs a reason (it is recorded)")
		return
	}
	res, err := u.opts.Promotions.Promote(r.Context(), env, s.identity().Actor()+": "+reason, reason, override, by)
	if err != nil {
		u.renderError(w, s, http.StatusBadRequest, "the promotion failed: "+credentialFree(err.Error()))
		return
	}
	done := "promoted " + shortCommit(res.Commit) + " into " + env
	if !res.Promoted {
		done = "not promoted into " + env + ": " + strings.Join(res.Reasons, "; ")
	}
	http.Redirect(w, r, "/promotions?done="+url.QueryEscape(done), http.StatusSeeOther) //nolint:gosec // a path on this server
}

func shortCommit(c string) string { return c[:min(len(c), 7)] }
