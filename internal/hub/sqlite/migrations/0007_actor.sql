-- fleetform hub schema, version 7: who made a write and why it was allowed (the actor, as
-- JSON; '' for events without one), and its search columns (lowercased values between
-- newlines: subject, email, name and token name; groups and roles).
ALTER TABLE events ADD COLUMN actor TEXT NOT NULL DEFAULT '';
ALTER TABLE events ADD COLUMN actor_names TEXT NOT NULL DEFAULT '';
ALTER TABLE events ADD COLUMN actor_groups TEXT NOT NULL DEFAULT '';
