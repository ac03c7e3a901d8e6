-- fleetform hub schema, version 4: cheaper ingest. A report rewrites its cluster's row; with no
-- index on a column a report changes, and free space in each page, PostgreSQL updates the row
-- in place (a HOT update) instead of adding an entry to every index. The staleness sweep reads
-- the fresh clusters sequentially instead (every few seconds; 100,000 rows take milliseconds).
DROP INDEX clusters_fresh;
ALTER TABLE clusters SET (fillfactor = 70);
ALTER TABLE deployments SET (fillfactor = 80);
ALTER TABLE target_counts SET (fillfactor = 70);
ALTER TABLE cluster_counts SET (fillfactor = 70);
