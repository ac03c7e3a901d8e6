package ui

import (
	"net/http"
	"strings"

	"github.com/fleetform/fleetform/internal/hub"
)

// auditKinds are the history's kinds the audit page lists: the writes people make.
var auditKinds = strings.Join([]string{hub.EventAuthoring, hub.EventApproval, hub.EventPromotion, hub.EventOverride,
	hub.EventMassDeletion, hub.EventToken, hub.EventSignIn}, ",")

// auditLimit bounds the events the audit page shows.
const auditLimit = 500

// auditData is the audit page: the writes, newest first, filtered by person, team and
// environment.
type auditData struct {
	Actor, Group, Environment string
	Envs                      []string
	Events                    []hub.Event
	// Truncated is set when older events matched too.
	Truncated bool
}

// audit lists who changed what (authoring, approvals, promotions, overrides, token changes,
// failed sign-ins), with the access decision's reason.
func (u *Handler) audit(w http.ResponseWriter, r *http.Request, s session) {
	ctx := r.Context()
	q := r.URL.Query()
	data := auditData{Actor: strings.TrimSpace(q.Get("actor")), Group: strings.TrimSpace(q.Get("group")),
		Environment: q.Get("environment")}
	var err error
	if data.Envs, err = u.environmentNames(ctx); err != nil {
		u.fail(w, r, s, err)
		return
	}
	events, err := u.hub.History(ctx, hub.HistoryFilter{Kind: auditKinds, Actor: data.Actor, Group: data.Group,
		Environment: data.Environment, Limit: auditLimit + 1})
	if err != nil {
		u.fail(w, r, s, err)
		return
	}
	data.Events, data.Truncated = events[:min(len(events), auditLimit)], len(events) > auditLimit
	u.render(w, r, s, "audit", "Audit", "audit", data)
}
