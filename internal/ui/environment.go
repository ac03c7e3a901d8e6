package ui

import (
	"context"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/fleetform/fleetform/api/v1alpha1"
	"github.com/fleetform/fleetform/internal/access"
	"github.com/fleetform/fleetform/internal/hub"
)

// typeRow is a cluster type of an environment with its rollout.
type typeRow struct {
	Name    string
	Targets int
	Counts  counts
}

type environmentData struct {
	Env      string
	Revision string
	Missing  bool
	Types    []typeRow
	Targets  []hub.TargetRollout
	Pager    pager
	Drift    driftSummary
	Sync     *syncView
	Decision *decision
	// MassDeletion is the refused mass deletion the session may confirm (nil: none).
	MassDeletion *massDeletionView
	// CanSync offers "sync now" (an administrator, under serve); Synced says one was asked.
	CanSync, Synced bool
	// Promotions are the latest promotions, refusals, overrides and approvals into the
	// environment, newest first.
	Promotions []hub.Event
}

// environmentPromotions bounds the promotions an environment page lists (fleetform history
// reads further back).
const environmentPromotions = 20

// promotionKinds are the history's kinds of decisions about an environment.
var promotionKinds = strings.Join([]string{hub.EventPromotion, hub.EventOverride, hub.EventApproval, hub.EventMassDeletion}, ",")

func (d environmentData) holdsForm() bool { return d.MassDeletion != nil && !d.MassDeletion.Done }

// massDeletionView is a mass deletion the last sync refused, and the form that confirms it.
type massDeletionView struct {
	Commit string
	// Done says the confirmation was recorded.
	Done bool
}

// driftSummary counts what drifts and names the first few of each.
type driftSummary struct {
	Behind, Failing, Silent, WrongPath counts2
}

// counts2 is a count with the first names it covers.
type counts2 struct {
	N     int
	First []string
}

func countsOf(c hub.NamedCount) counts2 { return counts2{N: c.Count, First: c.First} }

// syncView is the last sync of an environment, with links to the forge.
type syncView struct {
	hub.SyncRecord
	GitOpsLink, GitOpsRepoShown string
}

func (u *Handler) environment(w http.ResponseWriter, r *http.Request, s session) {
	env := r.PathValue("env")
	data, err := u.environmentData(r.Context(), env)
	if err != nil {
		u.fail(w, r, s, err)
		return
	}
	if data.Sync != nil && strings.HasPrefix(data.Sync.Error, hub.MassDeletionRefused) && s.principal.Kind != "" &&
		u.opts.Rights.Can(s.identity(), v1alpha1.ActionOverride) {
		data.MassDeletion = &massDeletionView{Commit: data.Sync.ControlPlaneCommit, Done: r.URL.Query().Get("confirmed") == data.Sync.ControlPlaneCommit}
	}
	data.CanSync, data.Synced = u.opts.Syncer != nil && s.admin(), r.URL.Query().Get("synced") == "1"
	lo, hi, p := paginate(r, len(data.Targets), u.opts.PageSize)
	data.Targets, data.Pager = data.Targets[lo:hi], p
	u.render(w, r, s, "environment", "Environment "+env, "overview", data)
}

func (u *Handler) environmentData(ctx context.Context, env string) (environmentData, error) {
	out := environmentData{Env: env}
	if err := u.knownEnvironment(ctx, env); err != nil {
		return out, err
	}
	dec, err := u.platformPromotion(ctx, env)
	if err != nil {
		return out, err
	}
	if dec != nil {
		out.Decision = decisionOf(*dec)
		u.withGatesNow(ctx, map[string]*decision{env: out.Decision})
	}
	if sync, err := u.hub.LatestSync(ctx, env); err == nil {
		out.Sync = &syncView{SyncRecord: sync, GitOpsLink: commitLink(sync.GitOpsRepo, sync.GitOpsCommit),
			GitOpsRepoShown: safeURL(sync.GitOpsRepo)}
	} else if hub.ErrorCode(err) != hub.CodeNotFound {
		return out, err
	}
	if out.Promotions, err = u.hub.History(ctx, hub.HistoryFilter{Environment: env, Kind: promotionKinds, Limit: environmentPromotions}); err != nil {
		return out, err
	}
	ro, err := u.hub.Rollout(ctx, env)
	if hub.ErrorCode(err) == hub.CodeNotFound {
		out.Missing = true
		return out, nil
	}
	if err != nil {
		return out, err
	}
	out.Revision, out.Targets = ro.Revision, ro.Targets
	out.Types = typeRows(ro.Targets)
	drift, err := u.hub.DriftSummary(ctx, env, u.opts.DriftAfter, 10)
	if err != nil {
		return out, err
	}
	out.Drift = driftSummary{Behind: countsOf(drift.Behind), Silent: countsOf(drift.Silent), WrongPath: countsOf(drift.WrongPath),
		Failing: countsOf(drift.Failing)}
	return out, nil
}

// typeRows sums an environment's targets per cluster type (clusters counted once per type,
// the target furthest behind speaking for it).
func typeRows(targets []hub.TargetRollout) []typeRow {
	byType := map[string][]hub.TargetRollout{}
	for _, t := range targets {
		byType[t.ClusterType] = append(byType[t.ClusterType], t)
	}
	out := make([]typeRow, 0, len(byType))
	for _, ct := range sortedKeys(byType) {
		out = append(out, typeRow{Name: ct, Targets: len(byType[ct]), Counts: workloadCounts(byType[ct])})
	}
	return out
}

// confirmMassDeletion records that the mass deletion the environment's last sync refused is
// intended, for an identity its access policies allow to override there; serve's leader
// applies the environment at its next round, recorded with trigger "mass-deletion".
func (u *Handler) confirmMassDeletion(w http.ResponseWriter, r *http.Request, s session) {
	env, commit := r.PathValue("env"), r.PostFormValue("commit")
	actor, denied := u.decide(s, access.Request{Action: v1alpha1.ActionOverride, Environments: []string{env}})
	if denied != "" {
		u.renderError(w, s, http.StatusForbidden, denied)
		return
	}
	c := hub.MassDeletionConfirmation{Environment: env, Commit: commit, Reason: r.PostFormValue("reason"), By: s.identity().Actor(), Actor: actor}
	if err := u.hub.ConfirmMassDeletion(r.Context(), c); err != nil {
		u.fail(w, r, s, err)
		return
	}
	http.Redirect(w, r, "/environments/"+url.PathEscape(env)+"?confirmed="+url.QueryEscape(commit), http.StatusSeeOther) //nolint:gosec // a path on this server
}

// syncNow asks serve to sync the environment at once (an administrator only); the sync is
// recorded with trigger "manual".
func (u *Handler) syncNow(w http.ResponseWriter, r *http.Request, s session) {
	env := r.PathValue("env")
	switch {
	case u.opts.Syncer == nil:
		u.renderError(w, s, http.StatusNotFound, "syncing from here needs fleetform serve")
		return
	case !s.admin():
		u.renderError(w, s, http.StatusForbidden, "only an administrator (the admin token) may sync an environment by hand")
		return
	}
	if err := u.knownEnvironment(r.Context(), env); err != nil {
		u.fail(w, r, s, err)
		return
	}
	if err := u.opts.Syncer.SyncNow(env); err != nil {
		u.renderError(w, s, http.StatusServiceUnavailable, err.Error())
		return
	}
	http.Redirect(w, r, "/environments/"+url.PathEscape(env)+"?synced=1", http.StatusSeeOther) //nolint:gosec // a path on this server
}

// knownEnvironment is a not-found error unless the hub knows env.
func (u *Handler) knownEnvironment(ctx context.Context, env string) error {
	envs, err := u.hub.Environments(ctx)
	if err != nil {
		return err
	}
	if !slices.Contains(envs, env) {
		return hub.Errorf(hub.CodeNotFound, "the hub knows no environment %q", env)
	}
	return nil
}
