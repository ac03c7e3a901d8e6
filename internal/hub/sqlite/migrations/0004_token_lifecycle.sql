-- fleetform hub schema, version 4: tokens can be listed, revoked, rotated and can expire.
-- id names a token without its secret (the first 8 bytes of its SHA-256, in hex); source
-- says where an admin token came from, so that a newly configured one replaces the one
-- configured before and the generated one. Times are Unix milliseconds, 0 when unset.
ALTER TABLE tokens ADD COLUMN id TEXT NOT NULL DEFAULT '';
ALTER TABLE tokens ADD COLUMN source TEXT NOT NULL DEFAULT '';
ALTER TABLE tokens ADD COLUMN expires_at INTEGER NOT NULL DEFAULT 0;
ALTER TABLE tokens ADD COLUMN revoked_at INTEGER NOT NULL DEFAULT 0;
UPDATE tokens SET id = lower(hex(substr(hash, 1, 8)));
UPDATE tokens SET source = 'configured', name = 'configured' WHERE kind = 'admin' AND name = 'env';
UPDATE tokens SET source = 'generated' WHERE kind = 'admin' AND name = 'generated';
CREATE UNIQUE INDEX tokens_id ON tokens (id);
CREATE INDEX tokens_kind ON tokens (kind);
