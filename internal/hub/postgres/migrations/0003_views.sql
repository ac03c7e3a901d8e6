-- fleetform hub schema, version 3: read-only views for dashboards (Grafana's PostgreSQL data
-- source) and ad-hoc SQL. docs/hub-dashboards.md documents every column. The views compute
-- what the API computes (the same rollout rules), from the same tables, so a dashboard and
-- `fleetform status` agree.

-- Each environment's latest desired revision.
CREATE VIEW v_latest_desired AS
SELECT DISTINCT ON (environment) environment, revision, gitops_repo, branch, promoted_commit, posted_at
FROM desired
ORDER BY environment, posted_at DESC, id DESC;

-- Every retained desired revision, per scheduled target, with the clusters of its cluster type
-- that are at that revision now, by state (from the rollout counters: fresh clusters only).
CREATE VIEW v_deployment_history AS
WITH states AS (
    SELECT environment, revision, cluster_type, deployment_target,
        sum(count) FILTER (WHERE state = 'compliant') AS compliant,
        sum(count) FILTER (WHERE state = 'failed') AS failed,
        sum(count) FILTER (WHERE state = 'progressing') AS progressing
    FROM target_counts
    GROUP BY environment, revision, cluster_type, deployment_target
)
SELECT d.environment, d.revision, d.promoted_commit, d.posted_at,
    (l.revision IS NOT NULL) AS latest,
    a.workload, a.deployment_target, a.cluster_type,
    coalesce(r.count, 0)::bigint AS clusters_at_revision,
    coalesce(s.compliant, 0)::bigint AS compliant,
    coalesce(s.failed, 0)::bigint AS failed,
    coalesce(s.progressing, 0)::bigint AS progressing
FROM desired d
JOIN desired_assignments a ON a.environment = d.environment AND a.revision = d.revision
LEFT JOIN v_latest_desired l ON l.environment = d.environment AND l.revision = d.revision
LEFT JOIN cluster_counts r ON r.environment = d.environment AND r.cluster_type = a.cluster_type AND r.revision = d.revision
LEFT JOIN states s ON s.environment = d.environment AND s.revision = d.revision
    AND s.cluster_type = a.cluster_type AND s.deployment_target = a.deployment_target;

-- Each target of each environment's latest desired revision with its rollout: the clusters of
-- its cluster type by state, exactly as GET /api/v1/environments/{env}/rollout counts them,
-- and the version application CI reported for the target.
CREATE VIEW v_environment_state AS
WITH types AS (
    SELECT environment, cluster_type,
        coalesce(sum(count) FILTER (WHERE revision = ''), 0) AS registered,
        coalesce(sum(count) FILTER (WHERE revision <> ''), 0) AS fresh
    FROM cluster_counts
    GROUP BY environment, cluster_type
)
SELECT h.environment, h.revision, h.promoted_commit, h.posted_at, h.workload, h.deployment_target, h.cluster_type,
    v.version AS scheduled_version,
    coalesce(t.registered, 0)::bigint AS clusters,
    h.compliant,
    h.failed,
    (h.progressing + greatest(coalesce(t.fresh, 0) - h.clusters_at_revision, 0))::bigint AS progressing,
    greatest(coalesce(t.registered, 0) - coalesce(t.fresh, 0), 0)::bigint AS unknown
FROM v_deployment_history h
LEFT JOIN types t ON t.environment = h.environment AND t.cluster_type = h.cluster_type
LEFT JOIN workload_versions v ON v.environment = h.environment AND v.deployment_target = h.deployment_target
WHERE h.latest;

-- One row per cluster and target that its environment's latest desired revision schedules on
-- its cluster type (one row with an empty target when none is), with the target's state by
-- the rollout rules, recomputed from the cluster's latest report.
CREATE VIEW v_cluster_state AS
SELECT c.environment, c.name AS cluster, c.cluster_type, c.labels,
    coalesce(a.deployment_target, '') AS deployment_target,
    coalesce(a.workload, '') AS workload,
    CASE
        WHEN NOT c.reported OR NOT c.fresh THEN 'unknown'
        WHEN l.revision IS NULL OR c.revision <> l.revision THEN 'progressing'
        WHEN d.status = 'Ready' THEN 'compliant'
        WHEN d.status = 'Failed' THEN 'failed'
        WHEN d.status IS NOT NULL THEN 'progressing'
        WHEN c.status = 'Compliant' THEN 'compliant'
        WHEN c.status = 'NonCompliant' THEN 'failed'
        ELSE 'progressing'
    END AS state,
    c.status AS cluster_status,
    c.revision,
    coalesce(l.revision, '') AS desired_revision,
    coalesce(d.status, '') AS deployment_status,
    coalesce(d.revision, '') AS deployed_version,
    d.since,
    c.observed_at,
    c.received_at,
    c.message,
    c.gitops_path
FROM clusters c
LEFT JOIN v_latest_desired l ON l.environment = c.environment
LEFT JOIN desired_assignments a ON a.environment = l.environment AND a.revision = l.revision AND a.cluster_type = c.cluster_type
LEFT JOIN deployments d ON d.cluster = c.name AND d.deployment_target = a.deployment_target;

-- Each workload of each environment's latest desired revision: its targets, cluster types,
-- reported versions and rollout totals.
CREATE VIEW v_workload_state AS
SELECT s.environment, s.revision, s.workload,
    string_agg(DISTINCT s.deployment_target, ', ' ORDER BY s.deployment_target) AS deployment_targets,
    string_agg(DISTINCT s.cluster_type, ', ' ORDER BY s.cluster_type) AS cluster_types,
    coalesce(string_agg(DISTINCT v.version, ', ' ORDER BY v.version) FILTER (WHERE v.workload = s.workload), '') AS versions,
    sum(s.clusters)::bigint AS clusters,
    sum(s.compliant)::bigint AS compliant,
    sum(s.failed)::bigint AS failed,
    sum(s.progressing)::bigint AS progressing,
    sum(s.unknown)::bigint AS unknown
FROM v_environment_state s
LEFT JOIN workload_versions v ON v.environment = s.environment AND v.deployment_target = s.deployment_target
GROUP BY s.environment, s.revision, s.workload;

-- Each workload's configuration key in each environment's latest desired revision, with the
-- distinct values its assignments give it (a sorted JSON array).
CREATE VIEW v_workload_config AS
SELECT l.environment, a.workload, kv.key, jsonb_agg(DISTINCT kv.value ORDER BY kv.value) AS config_values
FROM v_latest_desired l
JOIN desired_assignments a ON a.environment = l.environment AND a.revision = l.revision
CROSS JOIN LATERAL jsonb_each(CASE WHEN jsonb_typeof(a.config) = 'object' THEN a.config ELSE '{}'::jsonb END) kv
GROUP BY l.environment, a.workload, kv.key;

-- Every ordered pair of environments with a desired state, per workload of either: both sides
-- and what differs (cluster types, reported versions, configuration keys), as
-- GET /api/v1/diff compares them. Dashboards pick the pair with variables: no environment
-- name is written into a query.
CREATE VIEW v_environment_discrepancies AS
WITH pairs AS (
    SELECT f.environment AS from_environment, t.environment AS to_environment
    FROM v_latest_desired f JOIN v_latest_desired t ON f.environment <> t.environment
), workloads AS (
    SELECT p.from_environment, p.to_environment, w.workload
    FROM pairs p JOIN v_workload_state w ON w.environment IN (p.from_environment, p.to_environment)
    GROUP BY p.from_environment, p.to_environment, w.workload
), config AS (
    SELECT w.from_environment, w.to_environment, w.workload, string_agg(k.key, ', ' ORDER BY k.key) AS keys
    FROM workloads w
    CROSS JOIN LATERAL (
        SELECT c.key FROM v_workload_config c
        WHERE c.workload = w.workload AND c.environment IN (w.from_environment, w.to_environment)
        GROUP BY c.key
        HAVING count(*) < 2 OR count(DISTINCT c.config_values) > 1
    ) k
    GROUP BY w.from_environment, w.to_environment, w.workload
)
SELECT w.from_environment, w.to_environment, w.workload,
    coalesce(f.revision, '') AS from_revision,
    coalesce(t.revision, '') AS to_revision,
    coalesce(f.deployment_targets, '') AS from_deployment_targets,
    coalesce(t.deployment_targets, '') AS to_deployment_targets,
    coalesce(f.cluster_types, '') AS from_cluster_types,
    coalesce(t.cluster_types, '') AS to_cluster_types,
    coalesce(f.versions, '') AS from_versions,
    coalesce(t.versions, '') AS to_versions,
    coalesce(f.compliant, 0)::bigint AS from_compliant,
    coalesce(f.clusters, 0)::bigint AS from_clusters,
    coalesce(t.compliant, 0)::bigint AS to_compliant,
    coalesce(t.clusters, 0)::bigint AS to_clusters,
    coalesce(c.keys, '') AS config_differences,
    (f.workload IS NULL OR t.workload IS NULL OR f.cluster_types <> t.cluster_types OR f.versions <> t.versions
        OR c.keys IS NOT NULL) AS differs
FROM workloads w
LEFT JOIN v_workload_state f ON f.environment = w.from_environment AND f.workload = w.workload
LEFT JOIN v_workload_state t ON t.environment = w.to_environment AND t.workload = w.workload
LEFT JOIN config c ON c.from_environment = w.from_environment AND c.to_environment = w.to_environment
    AND c.workload = w.workload;

-- The history: desired revisions, status transitions, registrations, promotions and approvals.
CREATE VIEW v_events AS
SELECT id, time, kind, environment, cluster_type, cluster, workload, deployment_target, revision,
    from_state, to_state, message
FROM events;
