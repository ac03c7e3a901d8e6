-- fleetform hub schema, version 9: why an assignment waits for platform configuration (a JSON
-- list of sentences; '' when it does not).
ALTER TABLE desired_assignments ADD COLUMN waiting text NOT NULL DEFAULT '';
