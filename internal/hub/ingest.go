package hub

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/maphash"
	"maps"
	"slices"
	"strings"
	"time"
	"unique"
)

// Limits of a report.
const (
	MaxDeploymentsPerReport = 10_000
	MaxMessageLength        = 4096
)

// Ingest results, as Observer.Reported sees them.
const (
	ResultAccepted  = "accepted"
	ResultUnchanged = "unchanged"
	ResultIgnored   = "ignored"
	ResultRejected  = "rejected"
)

// job is one report waiting for its transaction.
type job struct {
	report   Report
	digest   string // reportDigest(report), computed before the job is queued
	hint     uint64 // a hash of digest, as clusterFacts keeps it
	received time.Time
	done     chan error
}

// Report validates a cluster's report and commits it; it returns once the report is durable
// (or rejected). A report older than the one the hub has (by observedAt) is accepted and
// ignored: a newer state is never overwritten by a stale one.
func (h *Hub) Report(ctx context.Context, p Principal, r Report) error {
	j, err := h.newJob(p, r)
	if err != nil {
		return err
	}
	if err := h.queue(ctx, j); err != nil {
		return err
	}
	return j.wait(ctx)
}

// SignedReport is a cluster's report with the cluster's own token, as a relay forwards it.
type SignedReport struct {
	Token  string
	Report Report
}

// MaxReportsPerBatch bounds the reports of one POST /api/v1/reports/batch (the API refuses
// more; hub relay and hub loadtest send at most that many).
const MaxReportsPerBatch = 1000

// ReportMany authenticates each report by its own token, as Report would be, and commits
// them; it returns once every one is durable or rejected, with one error per report, in
// order (nil: durable). A bad token or an invalid report rejects that report only.
func (h *Hub) ReportMany(ctx context.Context, reports []SignedReport) []error {
	errs := make([]error, len(reports))
	jobs := make([]*job, len(reports))
	for i, s := range reports {
		p, err := h.Authenticate(ctx, s.Token)
		if err == nil {
			jobs[i], err = h.newJob(p, s.Report)
		}
		errs[i] = err
	}
	for i, j := range jobs {
		if j == nil {
			continue
		}
		if err := h.queue(ctx, j); err != nil { // ctx ended: neither this report nor the rest are queued
			for k := i; k < len(jobs); k++ {
				if jobs[k] != nil {
					errs[k], jobs[k] = err, nil
				}
			}
			break
		}
	}
	for i, j := range jobs {
		if j != nil {
			errs[i] = j.wait(ctx)
		}
	}
	return errs
}

// newJob checks that p may send r and that r is valid, and makes its job.
func (h *Hub) newJob(p Principal, r Report) (*job, error) {
	if p.Kind != TokenCluster {
		return nil, Errorf(CodeForbidden, "reports must be sent with the cluster's own token")
	}
	if r.Cluster != p.Cluster {
		return nil, Errorf(CodeForbidden, "this token belongs to cluster %q, not %q", p.Cluster, r.Cluster)
	}
	now := h.opts.Now()
	if err := validateReport(r); err != nil {
		h.observe(ResultRejected)
		return nil, err
	}
	if err := h.checkNotAhead("observedAt", r.ObservedAt, now); err != nil {
		h.observe(ResultRejected)
		return nil, err
	}
	digest := reportDigest(r)
	return &job{report: r, digest: digest, hint: maphash.String(h.seed, digest) | 1, received: now, done: make(chan error, 1)}, nil
}

// queue hands j to the writers.
func (h *Hub) queue(ctx context.Context, j *job) error {
	select {
	case h.jobs <- j:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// wait returns j's outcome once its transaction ended (the writer commits it even when ctx
// ends first).
func (j *job) wait(ctx context.Context) error {
	select {
	case err := <-j.done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// checkNotAhead rejects a time from a client that is ahead of the hub's clock (now) by more
// than the allowed skew: a report dated in the future would stay newer than every correct
// report after it, and the cluster would never move again.
func (h *Hub) checkNotAhead(field string, t, now time.Time) error {
	if !t.After(now.Add(h.opts.MaxClockSkew)) {
		return nil
	}
	return Errorf(CodeInvalid, "%s %s is ahead of the hub's clock (%s) by more than the allowed skew of %s: check the sender's clock",
		field, t.UTC().Format(time.RFC3339Nano), now.UTC().Format(time.RFC3339Nano), h.opts.MaxClockSkew)
}

// supersedes reports whether a report observed at observed and received at received replaces
// the cluster's latest one, observed at stored: it is newer, or the stored time is beyond the
// allowed skew from the report's arrival (written before the hub bounded observedAt) and so
// orders nothing: the report, newer by arrival, replaces it.
func (h *Hub) supersedes(observed, stored, received time.Time) bool {
	return observed.After(stored) || stored.After(received.Add(h.opts.MaxClockSkew))
}

func validateReport(r Report) error {
	switch {
	case r.Revision == "":
		return Errorf(CodeInvalid, "revision is required")
	case r.ObservedAt.IsZero():
		return Errorf(CodeInvalid, "observedAt is required")
	case len(r.Message) > MaxMessageLength:
		return Errorf(CodeInvalid, "message is longer than %d bytes", MaxMessageLength)
	case len(r.Deployments) > MaxDeploymentsPerReport:
		return Errorf(CodeInvalid, "more than %d deployments", MaxDeploymentsPerReport)
	}
	switch r.Status {
	case Compliant, NonCompliant, Progressing:
	default:
		return Errorf(CodeInvalid, "status %q: want Compliant, NonCompliant or Progressing", r.Status)
	}
	seen := map[string]bool{}
	for i, d := range r.Deployments {
		switch {
		case d.DeploymentTarget == "":
			return Errorf(CodeInvalid, "deployments[%d]: deploymentTarget is required", i)
		case seen[d.DeploymentTarget]:
			return Errorf(CodeInvalid, "deployments[%d]: %s is listed twice", i, d.DeploymentTarget)
		}
		seen[d.DeploymentTarget] = true
		switch d.Status {
		case Ready, Failed, DeploymentProgress:
		default:
			return Errorf(CodeInvalid, "deployments[%d].status %q: want Ready, Failed or Progressing", i, d.Status)
		}
	}
	return nil
}

func (h *Hub) observe(result string) {
	if h.opts.Observer != nil {
		h.opts.Observer.Reported(result)
	}
}

// Run ingests reports and sweeps stale clusters until ctx ends.
func (h *Hub) Run(ctx context.Context) error {
	done := make(chan struct{})
	for range h.opts.Writers {
		go func() {
			h.write(ctx)
			done <- struct{}{}
		}()
	}
	h.sweepLoop(ctx)
	for range h.opts.Writers {
		<-done
	}
	return nil
}

// write commits queued reports, as many per transaction as are waiting (group commit).
func (h *Hub) write(ctx context.Context) {
	for {
		var first *job
		select {
		case first = <-h.jobs:
		case <-ctx.Done():
			return
		}
		batch := []*job{first}
	drain:
		for len(batch) < h.opts.MaxBatch {
			select {
			case j := <-h.jobs:
				batch = append(batch, j)
			default:
				break drain
			}
		}
		h.commit(ctx, batch)
	}
}

// commit applies a batch in one transaction. A problem with one report rejects that report;
// a database error fails the batch. A batch taken from the queue is committed even when ctx
// ends meanwhile (its senders wait for it): its statements are not watched for ctx's end,
// which also spares the drivers a watcher for each statement.
func (h *Hub) commit(ctx context.Context, batch []*job) {
	ctx = context.WithoutCancel(ctx)
	slices.SortStableFunc(batch, func(a, b *job) int {
		return strings.Compare(a.report.Cluster, b.report.Cluster) // consistent lock order
	})
	start := h.opts.Now()
	results := make([]error, len(batch))
	outcomes := make([]string, len(batch))
	err := h.store.Update(ctx, func(tx Tx) error {
		envs, err := h.batchEnvironments(ctx, tx, batch)
		if err != nil {
			return err
		}
		for _, env := range envs {
			if err := tx.LockEnvironment(ctx, env, false); err != nil {
				return err
			}
		}
		clear(results)
		clear(outcomes)
		rest, err := h.touchHeartbeats(ctx, tx, batch, outcomes)
		if err != nil {
			return err
		}
		locked, err := lockBatch(ctx, tx, rest)
		if err != nil {
			return err
		}
		if err := h.prefetchChanged(ctx, tx, rest, locked); err != nil {
			return err
		}
		counts := &pendingCounts{}
		for i, j := range batch {
			if outcomes[i] != "" {
				continue // a heartbeat, recorded
			}
			outcome, rejected, err := h.apply(ctx, tx, j, counts)
			if err != nil {
				return err
			}
			results[i], outcomes[i] = rejected, outcome
		}
		return counts.flush(ctx, tx)
	})
	if h.opts.Observer != nil {
		h.opts.Observer.Committed(len(batch), h.opts.Now().Sub(start), err)
	}
	for i, j := range batch {
		switch {
		case err != nil:
			h.opts.Logger.ErrorContext(ctx, "committing reports", "error", err.Error(), "reports", len(batch))
			h.observe(ResultRejected) // counted before the sender hears of it
			j.done <- Errorf(CodeInternal, "the report could not be stored")
		default:
			if outcomes[i] == ResultAccepted || outcomes[i] == ResultUnchanged {
				h.remember(j)
			}
			h.observe(outcomes[i])
			j.done <- results[i]
		}
	}
}

// Heartbeat is a report that changes nothing, as a store records it without reading the
// cluster first (TouchUnchanged).
type Heartbeat struct {
	Cluster, Digest        string
	ObservedAt, ReceivedAt time.Time
	// SkewLimit is the received time plus the allowed clock skew: a stored observed time
	// after it orders nothing (see supersedes).
	SkewLimit time.Time
}

// heartbeatToucher is a transaction that records heartbeats without reading their clusters
// first: it sets a heartbeat's times only where the stored cluster is reported, fresh, of the
// heartbeat's digest and superseded by it, and reports which it set. A store with row locks
// first locks clusters (every cluster of the batch, sorted), as LockClusters does.
type heartbeatToucher interface {
	TouchUnchanged(ctx context.Context, clusters []string, hs []Heartbeat) ([]bool, error)
}

// touchHeartbeats records, where tx can, the batch's reports that change nothing without
// reading their clusters, setting their outcomes to ResultUnchanged, and returns the others.
// Only the reports of the digest the hub last committed for their cluster are tried (a change
// would cost a statement for nothing), and only a cluster's first report in the batch: its
// later ones are applied after it, in order.
func (h *Hub) touchHeartbeats(ctx context.Context, tx Tx, batch []*job, outcomes []string) ([]*job, error) {
	t, ok := tx.(heartbeatToucher)
	if !ok {
		return batch, nil
	}
	var names []string
	var hs []Heartbeat
	var tried []int // the batch's index of each of hs
	for i, j := range batch {
		if i > 0 && batch[i-1].report.Cluster == j.report.Cluster {
			continue
		}
		names = append(names, j.report.Cluster)
		if f, _ := h.clusters.Load(j.report.Cluster); f.digest == j.hint {
			hs = append(hs, Heartbeat{Cluster: j.report.Cluster, Digest: j.digest, ObservedAt: j.report.ObservedAt,
				ReceivedAt: j.received, SkewLimit: j.received.Add(h.opts.MaxClockSkew)})
			tried = append(tried, i)
		}
	}
	if len(hs) == 0 {
		return batch, nil // no likely heartbeat: a statement for nothing
	}
	done, err := t.TouchUnchanged(ctx, names, hs)
	if err != nil {
		return nil, err
	}
	for k, i := range tried {
		if done[k] {
			outcomes[i] = ResultUnchanged
		}
	}
	var rest []*job
	for i, j := range batch {
		if outcomes[i] == "" {
			rest = append(rest, j)
		}
	}
	return rest, nil
}

// remember keeps the hint of a cluster's latest report, once committed.
func (h *Hub) remember(j *job) {
	if f, ok := h.clusters.Load(j.report.Cluster); ok && f.digest != j.hint {
		f.digest = j.hint
		h.clusters.Store(j.report.Cluster, f)
	}
}

// lockBatch locks a batch's clusters at once (the batch is sorted by cluster: the lock order
// every writer uses) and returns the registered ones.
func lockBatch(ctx context.Context, tx Tx, batch []*job) ([]ClusterRecord, error) {
	names := make([]string, 0, len(batch))
	for _, j := range batch {
		if len(names) == 0 || names[len(names)-1] != j.report.Cluster {
			names = append(names, j.report.Cluster)
		}
	}
	return tx.LockClusters(ctx, names)
}

// prefetchChanged reads at once the deployments of the batch's locked clusters whose report
// changes something (those apply reads); heartbeats need none. The clusters are locked
// already, so the states read stay current.
func (h *Hub) prefetchChanged(ctx context.Context, tx Tx, batch []*job, locked []ClusterRecord) error {
	byName := make(map[string]ClusterRecord, len(locked))
	for _, c := range locked {
		byName[c.Name] = c
	}
	var names []string
	for _, j := range batch {
		c, ok := byName[j.report.Cluster]
		if !ok {
			continue // apply rejects the report
		}
		if c.Reported && h.supersedes(j.report.ObservedAt, c.ObservedAt, j.received) && (!c.Fresh || j.digest != c.Digest) &&
			(len(names) == 0 || names[len(names)-1] != c.Name) {
			names = append(names, c.Name)
		}
	}
	if len(names) == 0 {
		return nil
	}
	return tx.PrefetchDeployments(ctx, names)
}

// batchEnvironments returns the environments of a batch's clusters, sorted (lock order).
// A cluster's environment never changes, so it is read once per cluster and remembered. An
// unregistered cluster is left for apply to reject; any other error fails the batch (a
// deadlock victim's transaction is aborted: going on would only fail later, unretried).
func (h *Hub) batchEnvironments(ctx context.Context, r Reader, batch []*job) ([]string, error) {
	seen := map[string]bool{}
	var unknown []string
	for _, j := range batch {
		if f, ok := h.clusters.Load(j.report.Cluster); ok {
			seen[f.env] = true
		} else if len(unknown) == 0 || unknown[len(unknown)-1] != j.report.Cluster {
			unknown = append(unknown, j.report.Cluster)
		}
	}
	if len(unknown) == 0 {
		return slices.Sorted(maps.Keys(seen)), nil
	}
	found, err := r.ClusterEnvironments(ctx, unknown)
	if err != nil {
		return nil, err
	}
	for name, env := range found {
		env = unique.Make(env).Value() // a million clusters share a few environments
		h.clusters.Store(name, clusterFacts{env: env})
		seen[env] = true
	}
	return slices.Sorted(maps.Keys(seen)), nil
}

// apply applies one report, adding its counter deltas to counts. It returns the outcome, an
// error rejecting the report, or a database error.
func (h *Hub) apply(ctx context.Context, tx Tx, j *job, counts *pendingCounts) (string, error, error) {
	r := j.report
	c, err := tx.LockCluster(ctx, r.Cluster)
	if errors.Is(err, ErrNotFound) {
		return ResultRejected, Errorf(CodeNotFound, "cluster %q is not registered", r.Cluster), nil
	}
	if err != nil {
		return "", nil, err
	}
	if c.Reported && !h.supersedes(r.ObservedAt, c.ObservedAt, j.received) {
		return ResultIgnored, nil, nil // not newer than what the hub has
	}
	digest := j.digest
	if c.Reported && c.Fresh && digest == c.Digest {
		return ResultUnchanged, nil, tx.TouchCluster(ctx, c.Name, r.ObservedAt, j.received)
	}
	next := c
	next.Reported, next.Fresh, next.Digest = true, true, digest
	next.Revision, next.Status, next.Message, next.GitOpsPath = r.Revision, r.Status, r.Message, r.GitOpsPath
	next.ObservedAt, next.ReceivedAt = r.ObservedAt, j.received
	return ResultAccepted, nil, h.transition(ctx, tx, c, next, r.Deployments, true, r.ObservedAt, counts)
}

// transition moves a cluster from one state to the next: counters, deployments, history.
// With replace, the reported deployments replace the cluster's; without (a cluster going
// stale), they stay.
// Events are dated at. The counter deltas go to counts, or straight to the store when nil.
func (h *Hub) transition(ctx context.Context, tx Tx, old, next ClusterRecord, reported []DeploymentReport, replace bool,
	at time.Time, counts *pendingCounts) error {
	var oldDeps []DeploymentState
	if old.Reported {
		var err error
		if oldDeps, err = tx.Deployments(ctx, old.Name); err != nil {
			return err
		}
	}
	newDeps := oldDeps
	if replace {
		newDeps = mergeDeployments(oldDeps, reported, next.ObservedAt)
	}
	oldIdx, err := h.desiredAt(ctx, tx, old.Environment, old.Revision)
	if err != nil {
		return err
	}
	newIdx := oldIdx
	if next.Revision != old.Revision {
		if newIdx, err = h.desiredAt(ctx, tx, next.Environment, next.Revision); err != nil {
			return err
		}
	}
	td, cd := deltas(contributionOf(old, oldDeps, oldIdx.targets(old.ClusterType)),
		contributionOf(next, newDeps, newIdx.targets(next.ClusterType)))
	if counts != nil {
		counts.targets, counts.clusters = append(counts.targets, td...), append(counts.clusters, cd...)
	} else if err := tx.AddCounts(ctx, td, cd); err != nil {
		return err
	}
	put, remove := diffDeployments(oldDeps, newDeps)
	if err := tx.SetDeployments(ctx, next.Name, put, remove); err != nil {
		return err
	}
	if err := tx.UpdateCluster(ctx, next); err != nil {
		return err
	}
	return tx.AddEvents(ctx, transitionEvents(old, next, oldDeps, newDeps, newIdx, at))
}

// pendingCounts gathers the counter deltas of an ingest transaction, written once at its
// end: the deltas of a group of reports mostly cancel out (one cluster leaves a state that
// another enters), and writing them merged and sorted touches each counter row once, in the
// same order in every transaction.
type pendingCounts struct {
	targets  []TargetCount
	clusters []ClusterCount
}

func (p *pendingCounts) flush(ctx context.Context, tx Tx) error {
	targets, clusters := mergeTargetCounts(p.targets), mergeClusterCounts(p.clusters)
	if len(targets) == 0 && len(clusters) == 0 {
		return nil
	}
	return tx.AddCounts(ctx, targets, clusters)
}

// mergeDeployments builds the new deployment states from a report, keeping Since for the
// targets whose status did not change.
func mergeDeployments(old []DeploymentState, reported []DeploymentReport, at time.Time) []DeploymentState {
	prev := map[string]DeploymentState{}
	for _, d := range old {
		prev[d.DeploymentTarget] = d
	}
	out := make([]DeploymentState, 0, len(reported))
	for _, d := range reported {
		s := DeploymentState{DeploymentTarget: d.DeploymentTarget, Namespace: d.Namespace, Status: d.Status, Revision: d.Revision, Since: at}
		if p, ok := prev[d.DeploymentTarget]; ok && p.Status == d.Status {
			s.Since = p.Since
		}
		out = append(out, s)
	}
	slices.SortFunc(out, func(a, b DeploymentState) int { return strings.Compare(a.DeploymentTarget, b.DeploymentTarget) })
	return out
}

// diffDeployments returns the states to write and the targets to remove.
func diffDeployments(old, next []DeploymentState) (put []DeploymentState, remove []string) {
	prev := map[string]DeploymentState{}
	for _, d := range old {
		prev[d.DeploymentTarget] = d
	}
	for _, d := range next {
		if p, ok := prev[d.DeploymentTarget]; !ok || p != d {
			put = append(put, d)
		}
		delete(prev, d.DeploymentTarget)
	}
	for dt := range prev {
		remove = append(remove, dt)
	}
	slices.Sort(remove)
	return put, remove
}

// transitionEvents records what changed for the history.
func transitionEvents(old, next ClusterRecord, oldDeps, newDeps []DeploymentState, idx *desiredIndex, at time.Time) []Event {
	var out []Event
	from, to := clusterStateText(old), clusterStateText(next)
	if from != to {
		out = append(out, Event{Time: at, Kind: EventCluster, Environment: next.Environment, ClusterType: next.ClusterType,
			Cluster: next.Name, Revision: next.Revision, From: from, To: to, Message: next.Message})
	}
	prev := map[string]DeploymentStatus{}
	for _, d := range oldDeps {
		prev[d.DeploymentTarget] = d.Status
	}
	for _, d := range newDeps {
		if p, ok := prev[d.DeploymentTarget]; !ok || p != d.Status {
			out = append(out, Event{Time: at, Kind: EventDeployment, Environment: next.Environment, ClusterType: next.ClusterType,
				Cluster: next.Name, Workload: idx.workloadOf(d.DeploymentTarget), DeploymentTarget: d.DeploymentTarget,
				Revision: d.Revision, From: string(p), To: string(d.Status)})
		}
	}
	return out
}

func clusterStateText(c ClusterRecord) string {
	switch {
	case !c.Reported:
		return ""
	case !c.Fresh:
		return "Unknown"
	}
	return fmt.Sprintf("%s@%s", c.Status, c.Revision)
}

// reportDigest identifies a report's content, everything but its times: the SHA-256 of its
// fields, each ended by a NUL byte, the deployments sorted by target (stored with the
// cluster: the bytes hashed never change).
func reportDigest(r Report) string {
	buf := make([]byte, 0, 256)
	buf = appendFields(buf, r.Revision, string(r.Status), r.Message, r.GitOpsPath)
	deps := r.Deployments
	byTarget := func(a, b DeploymentReport) int { return strings.Compare(a.DeploymentTarget, b.DeploymentTarget) }
	if !slices.IsSortedFunc(deps, byTarget) {
		deps = slices.Clone(deps)
		slices.SortFunc(deps, byTarget)
	}
	for _, d := range deps {
		buf = appendFields(buf, d.DeploymentTarget, d.Namespace, string(d.Status), d.Revision)
	}
	sum := sha256.Sum256(buf)
	return hex.EncodeToString(sum[:16])
}

// appendFields appends each field and a NUL byte after it.
func appendFields(buf []byte, fields ...string) []byte {
	for _, f := range fields {
		buf = append(append(buf, f...), 0)
	}
	return buf
}
