-- fleetform hub schema, version 6: one cluster's history is read through an index on
-- (cluster, time, id), whatever the value. The partial index events_cluster (WHERE
-- cluster <> '') serves only plans made for a known cluster name: the generic plan of a
-- prepared statement cannot prove cluster = $1 implies cluster <> '' and walks the whole
-- history through events_time.
DROP INDEX events_cluster;
CREATE INDEX events_by_cluster ON events (cluster, time, id);
