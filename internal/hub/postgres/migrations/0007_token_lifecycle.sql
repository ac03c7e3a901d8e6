-- fleetform hub schema, version 7: tokens can be listed, revoked, rotated and can expire.
-- id names a token without its secret (the first 8 bytes of its SHA-256, in hex); source
-- says where an admin token came from, so that a newly configured one replaces the one
-- configured before and the generated one. expires_at and revoked_at are NULL when unset.
ALTER TABLE tokens
    ADD COLUMN id text COLLATE "C" NOT NULL DEFAULT '',
    ADD COLUMN source text COLLATE "C" NOT NULL DEFAULT '',
    ADD COLUMN expires_at timestamptz,
    ADD COLUMN revoked_at timestamptz;
UPDATE tokens SET id = encode(substring(hash FROM 1 FOR 8), 'hex');
UPDATE tokens SET source = 'configured', name = 'configured' WHERE kind = 'admin' AND name = 'env';
UPDATE tokens SET source = 'generated' WHERE kind = 'admin' AND name = 'generated';
CREATE UNIQUE INDEX tokens_id ON tokens (id);
CREATE INDEX tokens_kind ON tokens (kind);
