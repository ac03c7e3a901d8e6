-- fleetform hub schema, version 10: who made a write and why it was allowed (the actor, as
-- JSON; '' for events without one), and its search columns (lowercased values between
-- newlines: subject, email, name and token name; groups and roles).
ALTER TABLE events
    ADD COLUMN actor text NOT NULL DEFAULT '',
    ADD COLUMN actor_names text NOT NULL DEFAULT '',
    ADD COLUMN actor_groups text NOT NULL DEFAULT '';

-- The history, with the actor.
CREATE OR REPLACE VIEW v_events AS
SELECT id, time, kind, environment, cluster_type, cluster, workload, deployment_target, revision,
    from_state, to_state, message, actor
FROM events;
