-- fleetform hub schema, version 3: one cluster's history is read through an index on
-- (cluster, time). The partial index events_cluster (WHERE cluster <> '') served no query:
-- SQLite uses a partial index only for a query that repeats its WHERE, so reading a cluster's
-- events walked the whole history newest first through events_time.
DROP INDEX events_cluster;
CREATE INDEX events_by_cluster ON events (cluster, time, id);
