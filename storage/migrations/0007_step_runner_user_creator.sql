-- Which console process runs a step: a step is started by one conditional
-- update, and 'running' is taken over only from another process (one that
-- died: an interrupted step) or after its runner released it, never from a
-- live duplicate in this process.
ALTER TABLE failover_steps ADD COLUMN runner TEXT NOT NULL DEFAULT '';

-- Who created an account ('' when not on record). An approval from an
-- account the requester created does not count. Accounts created before
-- this column existed take their creator from the audit chain's
-- user.create record.
ALTER TABLE users ADD COLUMN created_by TEXT NOT NULL DEFAULT '';
UPDATE users SET created_by = COALESCE((SELECT actor FROM audit
    WHERE action = 'user.create' AND subject = 'user:' || users.name ORDER BY id DESC LIMIT 1), '');
