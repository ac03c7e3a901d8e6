-- fleetform hub schema, version 1 (SQLite). Times are Unix milliseconds (UTC).
CREATE TABLE tokens (
    hash       BLOB PRIMARY KEY,
    kind       TEXT NOT NULL,
    cluster    TEXT NOT NULL DEFAULT '',
    name       TEXT NOT NULL DEFAULT '',
    created_at INTEGER NOT NULL
);
CREATE INDEX tokens_cluster ON tokens (cluster) WHERE cluster <> '';

CREATE TABLE clusters (
    name          TEXT PRIMARY KEY,
    environment   TEXT NOT NULL,
    cluster_type  TEXT NOT NULL,
    labels        TEXT NOT NULL DEFAULT '{}',
    token_hash    BLOB,
    registered_at INTEGER NOT NULL,
    reported      INTEGER NOT NULL DEFAULT 0,
    revision      TEXT NOT NULL DEFAULT '',
    status        TEXT NOT NULL DEFAULT '',
    message       TEXT NOT NULL DEFAULT '',
    observed_at   INTEGER NOT NULL DEFAULT 0,
    received_at   INTEGER NOT NULL DEFAULT 0,
    gitops_path   TEXT NOT NULL DEFAULT '',
    fresh         INTEGER NOT NULL DEFAULT 0,
    digest        TEXT NOT NULL DEFAULT ''
);
CREATE INDEX clusters_environment ON clusters (environment, cluster_type);
CREATE INDEX clusters_fresh ON clusters (received_at) WHERE fresh = 1;

CREATE TABLE deployments (
    cluster           TEXT NOT NULL,
    deployment_target TEXT NOT NULL,
    namespace         TEXT NOT NULL DEFAULT '',
    status            TEXT NOT NULL,
    revision          TEXT NOT NULL DEFAULT '',
    since             INTEGER NOT NULL,
    PRIMARY KEY (cluster, deployment_target)
) WITHOUT ROWID;
CREATE INDEX deployments_failed ON deployments (cluster) WHERE status = 'Failed';

CREATE TABLE desired (
    id          INTEGER PRIMARY KEY,
    environment TEXT NOT NULL,
    revision    TEXT NOT NULL,
    gitops_repo TEXT NOT NULL DEFAULT '',
    branch      TEXT NOT NULL DEFAULT '',
    posted_at   INTEGER NOT NULL,
    UNIQUE (environment, revision)
);

CREATE TABLE desired_assignments (
    environment       TEXT NOT NULL,
    revision          TEXT NOT NULL,
    cluster_type      TEXT NOT NULL,
    deployment_target TEXT NOT NULL,
    workload          TEXT NOT NULL DEFAULT '',
    namespace         TEXT NOT NULL DEFAULT '',
    manifests         TEXT NOT NULL DEFAULT '{}',
    config            TEXT NOT NULL DEFAULT '{}',
    PRIMARY KEY (environment, revision, cluster_type, deployment_target)
) WITHOUT ROWID;

CREATE TABLE target_counts (
    environment       TEXT NOT NULL,
    revision          TEXT NOT NULL,
    cluster_type      TEXT NOT NULL,
    deployment_target TEXT NOT NULL,
    state             TEXT NOT NULL,
    count             INTEGER NOT NULL,
    PRIMARY KEY (environment, revision, cluster_type, deployment_target, state)
) WITHOUT ROWID;

CREATE TABLE cluster_counts (
    environment  TEXT NOT NULL,
    cluster_type TEXT NOT NULL,
    revision     TEXT NOT NULL,
    count        INTEGER NOT NULL,
    PRIMARY KEY (environment, cluster_type, revision)
) WITHOUT ROWID;

CREATE TABLE workload_versions (
    environment       TEXT NOT NULL,
    deployment_target TEXT NOT NULL,
    workload          TEXT NOT NULL,
    version           TEXT NOT NULL,
    build             TEXT NOT NULL DEFAULT '',
    source_commit     TEXT NOT NULL DEFAULT '',
    reported_at       INTEGER NOT NULL,
    PRIMARY KEY (environment, deployment_target)
) WITHOUT ROWID;

CREATE TABLE events (
    id                INTEGER PRIMARY KEY,
    time              INTEGER NOT NULL,
    kind              TEXT NOT NULL,
    environment       TEXT NOT NULL DEFAULT '',
    cluster_type      TEXT NOT NULL DEFAULT '',
    cluster           TEXT NOT NULL DEFAULT '',
    workload          TEXT NOT NULL DEFAULT '',
    deployment_target TEXT NOT NULL DEFAULT '',
    revision          TEXT NOT NULL DEFAULT '',
    from_state        TEXT NOT NULL DEFAULT '',
    to_state          TEXT NOT NULL DEFAULT '',
    message           TEXT NOT NULL DEFAULT ''
);
CREATE INDEX events_time ON events (time);
CREATE INDEX events_environment ON events (environment, time);
CREATE INDEX events_cluster ON events (cluster, time) WHERE cluster <> '';
