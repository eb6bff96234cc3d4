-- API tokens: a user's bearer tokens for /api/v1. Only the token's SHA-256
-- is stored (token_hash); prefix is its first characters, shown in lists
-- so a person can tell their tokens apart. scope caps the owner's role
-- ('read': viewer, 'operate': operator); the owner's current role and
-- account state are read on every use, so a disabled account's tokens
-- stop at once. Every token expires (expires_ms); revoked_ms 0: live.
CREATE TABLE api_tokens (
    id           INTEGER PRIMARY KEY,
    token_hash   TEXT    NOT NULL UNIQUE,
    prefix       TEXT    NOT NULL,
    user         TEXT    NOT NULL,
    name         TEXT    NOT NULL,
    scope        TEXT    NOT NULL CHECK (scope IN ('read', 'operate')),
    created_ms   INTEGER NOT NULL,
    expires_ms   INTEGER NOT NULL,
    last_used_ms INTEGER NOT NULL DEFAULT 0,
    revoked_ms   INTEGER NOT NULL DEFAULT 0,
    revoked_by   TEXT    NOT NULL DEFAULT ''
);
CREATE INDEX api_tokens_user ON api_tokens(user, created_ms);
