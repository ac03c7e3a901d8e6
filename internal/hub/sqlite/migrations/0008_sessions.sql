-- fleetform hub schema, version 8: web UI sessions are tokens of kind "session"; what one
-- stands for (the hub token it signed in with, or the person, as JSON) is kept here ('' for
-- every other token).
ALTER TABLE tokens ADD COLUMN session TEXT NOT NULL DEFAULT '';
