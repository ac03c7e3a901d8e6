-- fleetform hub schema, version 8: what fleetform serve records, so that every replica
-- answers its status. sources: one row per git source polled (URL and branch); syncs: the
-- applies of each environment, the latest 100 per environment (recording one more removes the
-- oldest), in the order recorded (id). Times are NULL when unset.
CREATE TABLE sources (
    url         text COLLATE "C" NOT NULL,
    branch      text COLLATE "C" NOT NULL,
    kind        text COLLATE "C" NOT NULL,
    last_commit text COLLATE "C" NOT NULL DEFAULT '',
    last_poll   timestamptz,
    last_sync   timestamptz,
    last_error  text COLLATE "C" NOT NULL DEFAULT '',
    failures    bigint NOT NULL DEFAULT 0,
    next_poll   timestamptz,
    PRIMARY KEY (url, branch)
);

CREATE TABLE syncs (
    id                   bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    environment          text COLLATE "C" NOT NULL,
    time                 timestamptz NOT NULL,
    duration_ms          bigint NOT NULL DEFAULT 0,
    control_plane_commit text COLLATE "C" NOT NULL DEFAULT '',
    common_commit        text COLLATE "C" NOT NULL DEFAULT '',
    gitops_repo          text COLLATE "C" NOT NULL DEFAULT '',
    branch               text COLLATE "C" NOT NULL DEFAULT '',
    gitops_commit        text COLLATE "C" NOT NULL DEFAULT '',
    pull_request         text COLLATE "C" NOT NULL DEFAULT '',
    no_change            boolean NOT NULL DEFAULT false,
    files_changed        bigint NOT NULL DEFAULT 0,
    failed               jsonb NOT NULL DEFAULT '[]',
    error                text COLLATE "C" NOT NULL DEFAULT '',
    triggered_by         text COLLATE "C" NOT NULL DEFAULT ''
);
CREATE INDEX syncs_environment ON syncs (environment, id);
