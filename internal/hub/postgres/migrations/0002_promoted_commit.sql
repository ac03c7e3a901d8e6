-- fleetform hub schema, version 2: the control-plane commit a desired revision rendered.
ALTER TABLE desired ADD COLUMN promoted_commit text COLLATE "C" NOT NULL DEFAULT '';
