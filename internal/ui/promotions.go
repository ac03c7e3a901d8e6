package ui

import (
	"context"
	"net/http"
	"net/url"
	"strings"

	"github.com/fleetform/fleetform/internal/hub"
)

// stage is an environment of the promotion chain as the promotions page shows it.
type stage struct {
	envState
	Approvals []hub.Event
	// Candidate is the commit waiting to be promoted into it ("" when none is waiting).
	Candidate string
}

type promotionsData struct {
	// Levels are the chain's environments grouped by distance from its start: rings of
	// one level side by side.
	Levels [][]stage
	Done   string
}

func (u *Handler) promotions(w http.ResponseWriter, r *http.Request, s session) {
	data, err := u.promotionsData(r.Context())
	if err != nil {
		u.fail(w, r, s, err)
		return
	}
	data.Done = r.URL.Query().Get("approved")
	u.render(w, r, s, "promotions", "Promotions", "promotions", data)
}

func (u *Handler) promotionsData(ctx context.Context) (promotionsData, error) {
	var out promotionsData
	envs, err := u.environments(ctx)
	if err != nil {
		return out, err
	}
	level := map[string]int{}
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
		l := 0
		if env.from != "" {
			l = level[env.from] + 1
		}
		level[env.name] = l
		for len(out.Levels) <= l {
			out.Levels = append(out.Levels, nil)
		}
		out.Levels[l] = append(out.Levels[l], sg)
	}
	return out, nil
}

// approve records an admin's approval of a commit for an environment, as `fleetform
// approve` does.
func (u *Handler) approve(w http.ResponseWriter, r *http.Request, s session) {
	if !s.admin() {
		u.renderError(w, s, http.StatusForbidden, "approving needs the admin token")
		return
	}
	env, commit := r.PostFormValue("environment"), strings.TrimSpace(r.PostFormValue("commit"))
	by := s.principal.Name
	if by == "" {
		by = "admin"
	}
	if reason := strings.TrimSpace(r.PostFormValue("reason")); reason != "" {
		by += ": " + reason
	}
	if err := u.hub.Approve(r.Context(), env, commit, by); err != nil {
		u.fail(w, r, s, err)
		return
	}
	http.Redirect(w, r, "/promotions?approved="+url.QueryEscape(env), http.StatusSeeOther) //nolint:gosec // a path on this server
}
