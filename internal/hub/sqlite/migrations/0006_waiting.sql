-- fleetform hub schema, version 6: why an assignment waits for platform configuration (a JSON
-- list of sentences; '' when it does not).
ALTER TABLE desired_assignments ADD COLUMN waiting TEXT NOT NULL DEFAULT '';
