-- People who may use the console. password_hash is bcrypt; '' means the
-- account cannot sign in with a password (reverse-proxy mode only).
CREATE TABLE users (
    name          TEXT    PRIMARY KEY,
    role          TEXT    NOT NULL CHECK (role IN ('viewer', 'operator', 'admin')),
    password_hash TEXT    NOT NULL DEFAULT '',
    created_ms    INTEGER NOT NULL,
    disabled      INTEGER NOT NULL DEFAULT 0 CHECK (disabled IN (0, 1))
) WITHOUT ROWID;

-- Server-side sessions. Only the SHA-256 of the cookie token is stored, so a
-- copy of the database does not let anyone sign in as someone else.
CREATE TABLE sessions (
    token_hash   TEXT    PRIMARY KEY,
    user         TEXT    NOT NULL REFERENCES users(name) ON DELETE CASCADE,
    created_ms   INTEGER NOT NULL,
    last_seen_ms INTEGER NOT NULL,
    client_ip    TEXT    NOT NULL,
    user_agent   TEXT    NOT NULL
) WITHOUT ROWID;
CREATE INDEX sessions_user ON sessions(user);

-- The audit chain: every record carries the hash of the one before it
-- (storage/audit.go documents the exact encoding), so an edit, deletion or
-- reordering made behind the console's back is found by `drconsole audit
-- verify`. ids are assigned by the console as previous + 1, never reused.
CREATE TABLE audit (
    id         INTEGER PRIMARY KEY,
    at_ms      INTEGER NOT NULL,
    actor      TEXT    NOT NULL,
    action     TEXT    NOT NULL,
    client_ip  TEXT    NOT NULL,
    user_agent TEXT    NOT NULL,
    subject    TEXT    NOT NULL,
    details    TEXT    NOT NULL,   -- compact JSON, exactly the bytes that were hashed
    prev_hash  TEXT    NOT NULL,
    hash       TEXT    NOT NULL
);
CREATE INDEX audit_actor ON audit(actor, id);
CREATE INDEX audit_action ON audit(action, id);
CREATE INDEX audit_at ON audit(at_ms);

-- Defence in depth: the console never changes a record, so refuse it. Anyone
-- with the file can drop these triggers; the hash chain is the real proof.
CREATE TRIGGER audit_no_update BEFORE UPDATE ON audit
BEGIN
    SELECT RAISE(ABORT, 'audit records are append-only');
END;
CREATE TRIGGER audit_no_delete BEFORE DELETE ON audit
BEGIN
    SELECT RAISE(ABORT, 'audit records are append-only');
END;
