-- Failover runs: a durable state machine. The plan (steps and their
-- parameters) is stored as JSON with its hash; approvals are bound to that
-- hash, so any change to the plan voids them.
CREATE TABLE failover_runs (
    id                 INTEGER PRIMARY KEY,
    flow               TEXT    NOT NULL,
    reason             TEXT    NOT NULL,
    created_by         TEXT    NOT NULL,
    created_ms         INTEGER NOT NULL,
    updated_ms         INTEGER NOT NULL,
    status             TEXT    NOT NULL CHECK (status IN ('pending', 'approved', 'rejected', 'running', 'completed', 'failed', 'cancelled')),
    plan_json          TEXT    NOT NULL,
    plan_hash          TEXT    NOT NULL,
    approvals_required INTEGER NOT NULL CHECK (approvals_required >= 1),
    break_glass        TEXT    NOT NULL DEFAULT ''   -- the reason, when a single operator used break-glass
);

CREATE TABLE failover_approvals (
    id         INTEGER PRIMARY KEY,
    run_id     INTEGER NOT NULL REFERENCES failover_runs(id),
    approver   TEXT    NOT NULL,
    decision   TEXT    NOT NULL CHECK (decision IN ('approve', 'reject')),
    reason     TEXT    NOT NULL,
    plan_hash  TEXT    NOT NULL,
    at_ms      INTEGER NOT NULL,
    expires_ms INTEGER NOT NULL
);
CREATE INDEX failover_approvals_run ON failover_approvals(run_id);

-- One row per step; a step moves pending -> running -> done | failed.
-- 'running' found at start-up means the console died during the step.
CREATE TABLE failover_steps (
    run_id      INTEGER NOT NULL REFERENCES failover_runs(id),
    idx         INTEGER NOT NULL,
    kind        TEXT    NOT NULL,
    status      TEXT    NOT NULL CHECK (status IN ('pending', 'running', 'done', 'failed')),
    attempts    INTEGER NOT NULL DEFAULT 0,
    started_ms  INTEGER NOT NULL DEFAULT 0,
    finished_ms INTEGER NOT NULL DEFAULT 0,
    started_by  TEXT    NOT NULL DEFAULT '',
    result      TEXT    NOT NULL DEFAULT '',   -- JSON
    error       TEXT    NOT NULL DEFAULT '',
    PRIMARY KEY (run_id, idx)
) WITHOUT ROWID;
