-- fleetform hub schema, version 11: web UI sessions are tokens of kind "session"; what one
-- stands for (the hub token it signed in with, or the person, as JSON) is kept here ('' for
-- every other token).
ALTER TABLE tokens ADD COLUMN session text NOT NULL DEFAULT '';
