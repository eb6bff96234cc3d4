-- DR drills: one row per drill run (a failover run whose plan is a drill),
-- created when the drill starts. Unknown figures stay NULL: a drill that
-- saw no first record has no achieved RTO, an unknown RPO is not 0.
CREATE TABLE drill_results (
    run_id           INTEGER PRIMARY KEY REFERENCES failover_runs(id),
    flow             TEXT    NOT NULL,
    started_ms       INTEGER NOT NULL,          -- the drill's start (the operator's click)
    flink_target     TEXT    NOT NULL DEFAULT '',
    job_id           TEXT    NOT NULL DEFAULT '',   -- the drill job's id (derived from the run)
    groups           TEXT    NOT NULL DEFAULT '[]', -- JSON: the temporary DR consumer groups
    submitted_ms     INTEGER,                   -- the drill job was submitted
    running_ms       INTEGER,                   -- Flink first said RUNNING
    first_record_ms  INTEGER,                   -- Flink first counted a record processed
    rpo_ms           INTEGER,                   -- the flow's RPO at the first record; NULL: unknown
    rpo_at_least     INTEGER NOT NULL DEFAULT 0,    -- rpo_ms is a lower bound
    reread           TEXT    NOT NULL DEFAULT '{}', -- JSON: step index -> re-read bound of that step
    reread_expected  INTEGER NOT NULL DEFAULT 0,    -- how many steps owe a bound (fewer recorded: unknown)
    rules_failed     TEXT    NOT NULL DEFAULT '[]', -- JSON: the safety rules a failover would have failed
    outcome          TEXT    NOT NULL DEFAULT '' CHECK (outcome IN ('', 'measured', 'failed')),
    error            TEXT    NOT NULL DEFAULT '',
    cleanup_status   TEXT    NOT NULL DEFAULT 'pending' CHECK (cleanup_status IN ('pending', 'running', 'done', 'failed')),
    cleanup_attempts INTEGER NOT NULL DEFAULT 0,
    cleanup_error    TEXT    NOT NULL DEFAULT '',
    cleanup_next_ms  INTEGER NOT NULL DEFAULT 0,
    cleanup_done_ms  INTEGER
);
CREATE INDEX drill_results_flow ON drill_results(flow, started_ms);
CREATE INDEX drill_results_cleanup ON drill_results(cleanup_next_ms) WHERE cleanup_status <> 'done';
