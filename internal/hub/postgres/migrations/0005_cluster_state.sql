-- fleetform hub schema, version 5: v_cluster_state has a NULL deployment_target and workload
-- (not '') for a cluster whose cluster type has nothing scheduled, so that a filter on the
-- target reaches the assignments' and deployments' indexes: one target over 100,000 clusters
-- takes milliseconds instead of recomputing every cluster's state.
DROP VIEW v_cluster_state;
CREATE VIEW v_cluster_state AS
SELECT c.environment, c.name AS cluster, c.cluster_type, c.labels,
    a.deployment_target,
    a.workload,
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
