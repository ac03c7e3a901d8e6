-- fleetform hub schema, version 1 (PostgreSQL). The same tables as the SQLite store; times are
-- timestamptz (NULL when unset), labels, manifests and config are jsonb.
CREATE TABLE tokens (
    hash       bytea PRIMARY KEY,
    kind       text COLLATE "C" NOT NULL,
    cluster    text COLLATE "C" NOT NULL DEFAULT '',
    name       text COLLATE "C" NOT NULL DEFAULT '',
    created_at timestamptz
);
CREATE INDEX tokens_cluster ON tokens (cluster) WHERE cluster <> '';

CREATE TABLE clusters (
    name          text COLLATE "C" PRIMARY KEY,
    environment   text COLLATE "C" NOT NULL,
    cluster_type  text COLLATE "C" NOT NULL,
    labels        jsonb NOT NULL DEFAULT '{}',
    token_hash    bytea,
    registered_at timestamptz,
    reported      boolean NOT NULL DEFAULT false,
    revision      text COLLATE "C" NOT NULL DEFAULT '',
    status        text COLLATE "C" NOT NULL DEFAULT '',
    message       text COLLATE "C" NOT NULL DEFAULT '',
    observed_at   timestamptz,
    received_at   timestamptz,
    gitops_path   text COLLATE "C" NOT NULL DEFAULT '',
    fresh         boolean NOT NULL DEFAULT false,
    digest        text COLLATE "C" NOT NULL DEFAULT ''
);
CREATE INDEX clusters_environment ON clusters (environment, cluster_type);
CREATE INDEX clusters_fresh ON clusters (received_at) WHERE fresh;

CREATE TABLE deployments (
    cluster           text COLLATE "C" NOT NULL,
    deployment_target text COLLATE "C" NOT NULL,
    namespace         text COLLATE "C" NOT NULL DEFAULT '',
    status            text COLLATE "C" NOT NULL,
    revision          text COLLATE "C" NOT NULL DEFAULT '',
    since             timestamptz,
    PRIMARY KEY (cluster, deployment_target)
);
CREATE INDEX deployments_failed ON deployments (cluster) WHERE status = 'Failed';

CREATE TABLE desired (
    id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    environment text COLLATE "C" NOT NULL,
    revision    text COLLATE "C" NOT NULL,
    gitops_repo text COLLATE "C" NOT NULL DEFAULT '',
    branch      text COLLATE "C" NOT NULL DEFAULT '',
    posted_at   timestamptz NOT NULL,
    UNIQUE (environment, revision)
);
CREATE INDEX desired_latest ON desired (environment, posted_at DESC, id DESC);

CREATE TABLE desired_assignments (
    environment       text COLLATE "C" NOT NULL,
    revision          text COLLATE "C" NOT NULL,
    cluster_type      text COLLATE "C" NOT NULL,
    deployment_target text COLLATE "C" NOT NULL,
    workload          text COLLATE "C" NOT NULL DEFAULT '',
    namespace         text COLLATE "C" NOT NULL DEFAULT '',
    manifests         jsonb NOT NULL DEFAULT '{}',
    config            jsonb NOT NULL DEFAULT '{}',
    PRIMARY KEY (environment, revision, cluster_type, deployment_target)
);

CREATE TABLE target_counts (
    environment       text COLLATE "C" NOT NULL,
    revision          text COLLATE "C" NOT NULL,
    cluster_type      text COLLATE "C" NOT NULL,
    deployment_target text COLLATE "C" NOT NULL,
    state             text COLLATE "C" NOT NULL,
    count             integer NOT NULL,
    PRIMARY KEY (environment, revision, cluster_type, deployment_target, state)
);

CREATE TABLE cluster_counts (
    environment  text COLLATE "C" NOT NULL,
    cluster_type text COLLATE "C" NOT NULL,
    revision     text COLLATE "C" NOT NULL,
    count        integer NOT NULL,
    PRIMARY KEY (environment, cluster_type, revision)
);

CREATE TABLE workload_versions (
    environment       text COLLATE "C" NOT NULL,
    deployment_target text COLLATE "C" NOT NULL,
    workload          text COLLATE "C" NOT NULL,
    version           text COLLATE "C" NOT NULL,
    build             text COLLATE "C" NOT NULL DEFAULT '',
    source_commit     text COLLATE "C" NOT NULL DEFAULT '',
    reported_at       timestamptz NOT NULL,
    PRIMARY KEY (environment, deployment_target)
);

CREATE TABLE events (
    id                bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    time              timestamptz NOT NULL,
    kind              text COLLATE "C" NOT NULL,
    environment       text COLLATE "C" NOT NULL DEFAULT '',
    cluster_type      text COLLATE "C" NOT NULL DEFAULT '',
    cluster           text COLLATE "C" NOT NULL DEFAULT '',
    workload          text COLLATE "C" NOT NULL DEFAULT '',
    deployment_target text COLLATE "C" NOT NULL DEFAULT '',
    revision          text COLLATE "C" NOT NULL DEFAULT '',
    from_state        text COLLATE "C" NOT NULL DEFAULT '',
    to_state          text COLLATE "C" NOT NULL DEFAULT '',
    message           text COLLATE "C" NOT NULL DEFAULT ''
);
CREATE INDEX events_time ON events (time);
CREATE INDEX events_environment ON events (environment, time);
CREATE INDEX events_cluster ON events (cluster, time) WHERE cluster <> '';
