package ui

import (
	"cmp"
	"context"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/fleetform/fleetform/internal/hub"
)

// counts is how many clusters that should run something are in each state.
type counts struct {
	Intended, Compliant, Failed, Progressing, Unknown int
}

func (c *counts) add(o counts) {
	c.Intended += o.Intended
	c.Compliant += o.Compliant
	c.Failed += o.Failed
	c.Progressing += o.Progressing
	c.Unknown += o.Unknown
}

// Share is a state's share of the intended clusters in whole percent, for the bars.
func (c counts) Share(state string) int {
	if c.Intended == 0 {
		return 0
	}
	n := map[string]int{"compliant": c.Compliant, "failed": c.Failed, "progressing": c.Progressing, "unknown": c.Unknown}[state]
	return n * 100 / c.Intended
}

// Health is the cell's colour: failed when any cluster failed, compliant when all are,
// unknown when none reported, progressing otherwise.
func (c counts) Health() string {
	switch {
	case c.Failed > 0:
		return "failed"
	case c.Intended > 0 && c.Compliant == c.Intended:
		return "compliant"
	case c.Unknown == c.Intended:
		return "unknown"
	}
	return "progressing"
}

func targetCounts(t hub.TargetRollout) counts {
	return counts{Intended: t.Clusters, Compliant: t.Compliant, Failed: t.Failed, Progressing: t.Progressing, Unknown: t.Unknown}
}

// workloadCounts is how far a workload (its targets) has reached (hub.Reach).
func workloadCounts(targets []hub.TargetRollout) counts {
	r := hub.Reach(targets)
	return counts{Intended: r.ShouldReach, Compliant: r.Has, Failed: r.Failed, Progressing: r.Progressing, Unknown: r.Unknown}
}

// envState is an environment as the overview's column header shows it.
type envState struct {
	Name     string
	Revision string
	// Rendered is the control-plane commit the latest desired state rendered.
	Rendered string
	// From is the environment it is promoted from ("" for a first one).
	From string
	// Decision is the latest promotion decision into it (nil: none recorded).
	Decision *decision
	// Missing is set when the hub has no desired state for it yet.
	Missing bool
}

// decision is a recorded promotion decision.
type decision struct {
	Time     time.Time
	Commit   string
	Promoted bool
	// Reasons are the unmet gates' sentences of a refusal.
	Reasons []string
	Message string
	// Now is set when a refusal's reasons are the gates' as they stand now, not as they
	// were recorded (under serve, which can check them).
	Now bool
}

// withGatesNow replaces a recorded refusal's reasons by the gates' as they stand now, so that
// a page never shows facts that changed since (a refusal is recorded when its facts change,
// but a page may be read between the change and the next promotion round). Without
// Promotions (hub serve), or when the gates cannot be checked, the record stays.
func (u *Handler) withGatesNow(ctx context.Context, decisions map[string]*decision) {
	if u.opts.Promotions == nil {
		return
	}
	waiting := false
	for _, d := range decisions {
		waiting = waiting || (d != nil && !d.Promoted)
	}
	if !waiting {
		return
	}
	statuses, err := u.opts.Promotions.Review(ctx)
	if err != nil {
		u.opts.Logger.WarnContext(ctx, "checking the gates for a page", "error", err.Error())
		return
	}
	for _, st := range statuses {
		d := decisions[st.Gates.Environment]
		if d == nil || d.Promoted || st.Error != "" || st.Candidate == "" {
			continue
		}
		d.Commit, d.Reasons, d.Now = st.Candidate, st.Unmet, true
		if len(st.Unmet) == 0 {
			d.Reasons = []string{"every gate is met now: it is promoted at the next promotion round (automatic) or by fleetform promote"}
		}
	}
}

func decisionOf(e hub.Event) *decision {
	d := &decision{Time: e.Time, Commit: e.Revision, Message: e.Message}
	if rest, ok := strings.CutPrefix(e.Message, "refused: "); ok {
		d.Reasons = strings.Split(rest, "; ")
	} else {
		d.Promoted = true
	}
	return d
}

// overviewCell is a workload in an environment.
type overviewCell struct {
	Env      string
	Present  bool
	Counts   counts
	Versions string
	// Waiting counts the workload's assignments waiting for platform configuration.
	Waiting int
}

type overviewRow struct {
	Workload string
	Cells    []overviewCell
}

type overviewData struct {
	Environments []envState
	Rows         []overviewRow
	// Total sums every workload per environment.
	Totals []counts
}

func (u *Handler) overview(w http.ResponseWriter, r *http.Request, s session) {
	data, err := u.overviewData(r.Context())
	if err != nil {
		u.fail(w, r, s, err)
		return
	}
	u.render(w, r, s, "overview", "Fleet", "overview", data)
}

func (u *Handler) overviewData(ctx context.Context) (overviewData, error) {
	envs, err := u.environments(ctx)
	if err != nil {
		return overviewData{}, err
	}
	out := overviewData{}
	rows := map[string][]overviewCell{}
	for i, env := range envs {
		st, cells, err := u.environmentColumn(ctx, env.name, env.from)
		if err != nil {
			return out, err
		}
		out.Environments = append(out.Environments, st)
		var total counts
		for wl, c := range cells {
			if rows[wl] == nil {
				rows[wl] = make([]overviewCell, len(envs))
			}
			rows[wl][i] = c
			total.add(c.Counts)
		}
		out.Totals = append(out.Totals, total)
	}
	decisions := map[string]*decision{}
	for _, st := range out.Environments {
		decisions[st.Name] = st.Decision
	}
	u.withGatesNow(ctx, decisions)
	for _, wl := range sortedKeys(rows) {
		cells := rows[wl]
		for i := range cells {
			cells[i].Env = envs[i].name
		}
		out.Rows = append(out.Rows, overviewRow{Workload: wl, Cells: cells})
	}
	return out, nil
}

// platformPromotions is how many promotion decisions are looked through for the latest of
// the platform's (an application's promotions are recorded with their workload).
const platformPromotions = 50

// platformPromotion is the latest decision about promoting the platform's content into env
// (nil: none): an application's promotion (an event with its workload) is not one, so a
// page never shows an app's source commit as what the environment's platform pin is.
func (u *Handler) platformPromotion(ctx context.Context, env string) (*hub.Event, error) {
	events, err := u.hub.History(ctx, hub.HistoryFilter{Environment: env, Kind: hub.EventPromotion, Limit: platformPromotions})
	if err != nil {
		return nil, err
	}
	for i := range events {
		if events[i].Workload == "" {
			return &events[i], nil
		}
	}
	return nil, nil
}

// environmentColumn reads an environment's rollout, versions and latest promotion decision.
func (u *Handler) environmentColumn(ctx context.Context, env, from string) (envState, map[string]overviewCell, error) {
	st := envState{Name: env, From: from}
	dec, err := u.platformPromotion(ctx, env)
	if err != nil {
		return st, nil, err
	}
	if dec != nil {
		st.Decision = decisionOf(*dec)
	}
	ro, d, err := u.hub.DesiredRollout(ctx, env)
	if hub.ErrorCode(err) == hub.CodeNotFound {
		st.Missing = true
		return st, map[string]overviewCell{}, nil
	}
	if err != nil {
		return st, nil, err
	}
	st.Revision, st.Rendered = ro.Revision, d.PromotedCommit
	versions, err := u.hub.Versions(ctx, env)
	if err != nil {
		return st, nil, err
	}
	byWorkload := map[string][]hub.TargetRollout{}
	for _, t := range ro.Targets {
		byWorkload[t.Workload] = append(byWorkload[t.Workload], t)
	}
	vs := map[string][]string{}
	for _, v := range versions {
		if !slices.Contains(vs[v.Workload], v.Version) {
			vs[v.Workload] = append(vs[v.Workload], v.Version)
		}
	}
	waiting := map[string]int{}
	for _, a := range d.Assignments {
		if len(a.Waiting) > 0 {
			waiting[a.Workload]++
		}
	}
	cells := map[string]overviewCell{}
	for wl, ts := range byWorkload {
		slices.Sort(vs[wl])
		cells[wl] = overviewCell{Env: env, Present: true, Counts: workloadCounts(ts), Versions: strings.Join(vs[wl], ", "), Waiting: waiting[wl]}
	}
	return st, cells, nil
}

// chainEnv is an environment with the one it is promoted from.
type chainEnv struct{ name, from string }

// environments lists the hub's environments in promotion order: the configured chain's,
// else the order the recorded promotions imply (each after the one it was promoted from),
// then by name.
// environmentNames are the environments' names, in chain order (for the forms' selects).
func (u *Handler) environmentNames(ctx context.Context) ([]string, error) {
	envs, err := u.environments(ctx)
	names := make([]string, 0, len(envs))
	for _, e := range envs {
		names = append(names, e.name)
	}
	return names, err
}

func (u *Handler) environments(ctx context.Context) ([]chainEnv, error) {
	names, err := u.hub.Environments(ctx)
	if err != nil {
		return nil, err
	}
	from := map[string]string{}
	for _, env := range names {
		ev, err := u.platformPromotion(ctx, env)
		if err != nil {
			return nil, err
		}
		if ev != nil && ev.From != "" {
			from[env] = ev.From
		}
	}
	var links []ChainLink
	if u.opts.Chain != nil {
		if links, err = u.opts.Chain(ctx); err != nil {
			return nil, err
		}
	}
	rank := map[string]int{}
	for i, l := range links {
		rank[l.Env] = i
		from[l.Env] = l.From // the declared chain, not the last promotion recorded
	}
	order := links
	depth := func(env string) int {
		if r, ok := rank[env]; ok {
			return r
		}
		d := len(order)
		for seen := map[string]bool{env: true}; from[env] != "" && !seen[from[env]]; env = from[env] {
			seen[from[env]] = true
			d++
		}
		return d
	}
	slices.SortStableFunc(names, func(a, b string) int { return cmp.Or(cmp.Compare(depth(a), depth(b)), cmp.Compare(a, b)) })
	out := make([]chainEnv, 0, len(names))
	for _, env := range names {
		out = append(out, chainEnv{name: env, from: from[env]})
	}
	return out, nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
