package postgres

import (
	"cmp"
	"maps"
	"slices"
	"time"

	"github.com/jackc/pgx/v5/pgtype"

	"github.com/fleetform/fleetform/internal/hub"
)

// pendingRows are the rows a write transaction changed and has not sent yet: the latest
// state of each cluster row and deployment row it wrote, and the events it appended. They go
// out as one statement per kind before the transaction's next read or its commit, so a group
// of reports costs a handful of statements, not a few per report.
type pendingRows struct {
	clusters    map[string]pendingCluster
	deployments map[deploymentKey]deploymentWrite
	events      []hub.Event
}

// pendingCluster is a cluster row to write, with its labels as JSON.
type pendingCluster struct {
	hub.ClusterRecord
	labels string
}

type deploymentKey struct{ cluster, target string }

// deploymentWrite is the last write of a deployment row: its new state, or its removal.
type deploymentWrite struct {
	state  hub.DeploymentState
	remove bool
}

func (p *pendingRows) putCluster(c pendingCluster) {
	if p.clusters == nil {
		p.clusters = map[string]pendingCluster{}
	}
	p.clusters[cleanText(c.Name)] = c
}

// setDeployments records a cluster's deployment writes. Keys are cleaned of NUL (see
// cleanText) here, before they are merged: two targets that differ only there are one row,
// and one statement must not write a row twice.
func (p *pendingRows) setDeployments(cluster string, put []hub.DeploymentState, remove []string) {
	if p.deployments == nil {
		p.deployments = map[deploymentKey]deploymentWrite{}
	}
	cluster = cleanText(cluster)
	for _, d := range put {
		p.deployments[deploymentKey{cluster, cleanText(d.DeploymentTarget)}] = deploymentWrite{state: d}
	}
	for _, target := range remove {
		p.deployments[deploymentKey{cluster, cleanText(target)}] = deploymentWrite{remove: true}
	}
}

// queuePending queues the pending rows (deployments, clusters, then the heartbeat times that
// came after them, then events), in key order, and forgets them.
func (t *tx) queuePending() {
	t.queueDeployments()
	t.queueClusters()
	t.queueTouches()
	t.queueEvents()
}

func (t *tx) queueDeployments() {
	writes := t.pending.deployments
	if len(writes) == 0 {
		return
	}
	t.pending.deployments = nil
	keys := slices.SortedFunc(maps.Keys(writes), func(a, b deploymentKey) int {
		return cmp.Or(cmp.Compare(a.cluster, b.cluster), cmp.Compare(a.target, b.target))
	})
	var gone, goneTargets, clusters, targets, namespaces, statuses, revisions []string
	var since []pgtype.Timestamptz
	for _, k := range keys {
		w := writes[k]
		if w.remove {
			gone, goneTargets = append(gone, k.cluster), append(goneTargets, k.target)
			continue
		}
		d := w.state
		clusters, targets, namespaces = append(clusters, k.cluster), append(targets, k.target), append(namespaces, d.Namespace)
		statuses, revisions = append(statuses, string(d.Status)), append(revisions, d.Revision)
		since = append(since, pgtype.Timestamptz{Time: d.Since, Valid: !d.Since.IsZero()})
	}
	if len(gone) > 0 {
		t.queue(`DELETE FROM deployments d USING unnest($1::text[], $2::text[]) AS u(c, t)
			WHERE d.cluster = u.c AND d.deployment_target = u.t`, gone, goneTargets)
	}
	if len(clusters) > 0 {
		t.queue(`INSERT INTO deployments (cluster, deployment_target, namespace, status, revision, since)
			SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::timestamptz[])
			ON CONFLICT (cluster, deployment_target) DO UPDATE SET namespace = excluded.namespace, status = excluded.status,
			revision = excluded.revision, since = excluded.since`, clusters, targets, namespaces, statuses, revisions, since)
	}
}

func (t *tx) queueClusters() {
	rows := t.pending.clusters
	if len(rows) == 0 {
		return
	}
	t.pending.clusters = nil
	sorted := make([]pendingCluster, 0, len(rows))
	for _, name := range slices.Sorted(maps.Keys(rows)) {
		sorted = append(sorted, rows[name])
	}
	t.queue(`UPDATE clusters AS c SET environment = v.environment, cluster_type = v.cluster_type, labels = v.labels,
		token_hash = v.token_hash, registered_at = v.registered_at, reported = v.reported, revision = v.revision,
		status = v.status, message = v.message, observed_at = v.observed_at, received_at = v.received_at,
		gitops_path = v.gitops_path, fresh = v.fresh, digest = v.digest
		FROM `+clusterValues+`
		WHERE c.name = v.name`, clusterArrays(sorted)...)
}

// clusterValues is a table of cluster rows made of clusterArrays' 15 parameters, with the
// columns in the order of clusterColumns.
const clusterValues = `(SELECT v.name, v.environment, v.cluster_type, v.labels::jsonb AS labels, v.token_hash, v.registered_at,
		v.reported, v.revision, v.status, v.message, v.observed_at, v.received_at, v.gitops_path, v.fresh, v.digest
	FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::bytea[], $6::timestamptz[], $7::bool[], $8::text[],
		$9::text[], $10::text[], $11::timestamptz[], $12::timestamptz[], $13::text[], $14::bool[], $15::text[])
		AS v(name, environment, cluster_type, labels, token_hash, registered_at, reported, revision, status, message,
		observed_at, received_at, gitops_path, fresh, digest)) AS v`

// clusterArrays are the parameters of clusterValues: one array per column.
func clusterArrays(rows []pendingCluster) []any {
	n := len(rows)
	var (
		names, envs, types, labels, revisions, statuses = make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n)
		messages, paths, digests                        = make([]string, n), make([]string, n), make([]string, n)
		hashes                                          = make([][]byte, n)
		registered, observed, received                  = make([]pgtype.Timestamptz, n), make([]pgtype.Timestamptz, n), make([]pgtype.Timestamptz, n)
		reported, fresh                                 = make([]bool, n), make([]bool, n)
	)
	for i, c := range rows {
		names[i], envs[i], types[i], labels[i], hashes[i] = c.Name, c.Environment, c.ClusterType, c.labels, c.TokenHash
		registered[i], observed[i], received[i] = timestamptz(c.RegisteredAt), timestamptz(c.ObservedAt), timestamptz(c.ReceivedAt)
		reported[i], revisions[i], statuses[i], messages[i] = c.Reported, c.Revision, string(c.Status), c.Message
		paths[i], fresh[i], digests[i] = c.GitOpsPath, c.Fresh, c.Digest
	}
	return []any{names, envs, types, labels, hashes, registered, reported, revisions, statuses, messages, observed, received, paths, fresh, digests}
}

func (t *tx) queueEvents() {
	events := t.pending.events
	if len(events) == 0 {
		return
	}
	t.pending.events = nil
	times := make([]time.Time, len(events))
	cols := make([][]string, 13)
	for i := range cols {
		cols[i] = make([]string, len(events))
	}
	for i, e := range events {
		times[i] = e.Time
		actor, names, groups, err := hub.ActorColumns(e.Actor)
		if err != nil { // an Actor always marshals; keep the event without it rather than lose it
			actor, names, groups = "", "", ""
		}
		for j, v := range []string{e.Kind, e.Environment, e.ClusterType, e.Cluster, e.Workload, e.DeploymentTarget,
			e.Revision, e.From, e.To, e.Message, actor, names, groups} {
			cols[j][i] = v
		}
	}
	t.queue(`INSERT INTO events (time, kind, environment, cluster_type, cluster, workload, deployment_target, revision,
		from_state, to_state, message, actor, actor_names, actor_groups)
		SELECT u.t, u.k, u.e, u.ct, u.c, u.w, u.dt, u.r, u.f, u.tt, u.m, u.a, u.an, u.ag FROM unnest($1::timestamptz[],
		$2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[], $10::text[],
		$11::text[], $12::text[], $13::text[], $14::text[])
		WITH ORDINALITY AS u(t, k, e, ct, c, w, dt, r, f, tt, m, a, an, ag, o) ORDER BY o`,
		times, cols[0], cols[1], cols[2], cols[3], cols[4], cols[5], cols[6], cols[7], cols[8], cols[9], cols[10], cols[11], cols[12])
}

// timestamptz is a time column's value: NULL for the zero time.
func timestamptz(t time.Time) pgtype.Timestamptz {
	return pgtype.Timestamptz{Time: t, Valid: !t.IsZero()}
}
