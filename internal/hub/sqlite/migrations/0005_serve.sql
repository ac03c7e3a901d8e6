-- fleetform hub schema, version 5: what fleetform serve records, so that every replica
-- answers its status. sources: one row per git source polled (URL and branch); syncs: the
-- applies of each environment, the latest 100 per environment (recording one more removes the
-- oldest), in the order recorded (id). failed is a JSON array. Times are Unix milliseconds,
-- 0 when unset.
CREATE TABLE sources (
    url         TEXT NOT NULL,
    branch      TEXT NOT NULL,
    kind        TEXT NOT NULL,
    last_commit TEXT NOT NULL DEFAULT '',
    last_poll   INTEGER NOT NULL DEFAULT 0,
    last_sync   INTEGER NOT NULL DEFAULT 0,
    last_error  TEXT NOT NULL DEFAULT '',
    failures    INTEGER NOT NULL DEFAULT 0,
    next_poll   INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (url, branch)
) WITHOUT ROWID;

CREATE TABLE syncs (
    id                   INTEGER PRIMARY KEY,
    environment          TEXT NOT NULL,
    time                 INTEGER NOT NULL,
    duration_ms          INTEGER NOT NULL DEFAULT 0,
    control_plane_commit TEXT NOT NULL DEFAULT '',
    common_commit        TEXT NOT NULL DEFAULT '',
    gitops_repo          TEXT NOT NULL DEFAULT '',
    branch               TEXT NOT NULL DEFAULT '',
    gitops_commit        TEXT NOT NULL DEFAULT '',
    pull_request         TEXT NOT NULL DEFAULT '',
    no_change            INTEGER NOT NULL DEFAULT 0,
    files_changed        INTEGER NOT NULL DEFAULT 0,
    failed               TEXT NOT NULL DEFAULT '[]',
    error                TEXT NOT NULL DEFAULT '',
    triggered_by         TEXT NOT NULL DEFAULT ''
);
CREATE INDEX syncs_environment ON syncs (environment, id);
