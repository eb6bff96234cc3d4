-- Savepoints the console rewrote for DR (issue 14): origin 'rewritten', the
-- catalog path of the savepoint they were rewritten from and the flow whose
-- translation they hold. SQLite cannot change a CHECK constraint in place:
-- the table is rebuilt with the same rows (nothing references it).
CREATE TABLE savepoints_new (
    id            INTEGER PRIMARY KEY,
    flink_target  TEXT    NOT NULL DEFAULT '',
    job_id        TEXT    NOT NULL DEFAULT '',
    job_name      TEXT    NOT NULL DEFAULT '',
    path          TEXT    NOT NULL UNIQUE,
    kind          TEXT    NOT NULL CHECK (kind IN ('savepoint', 'checkpoint')),
    origin        TEXT    NOT NULL CHECK (origin IN ('rest', 'scan', 'manual', 'triggered', 'rewritten')),
    trigger_ms    INTEGER,
    completed_ms  INTEGER,
    size_bytes    INTEGER,
    status        TEXT    NOT NULL CHECK (status IN ('COMPLETED', 'FAILED', 'IN_PROGRESS', 'unknown')),
    checkpoint_id INTEGER,
    offsets_json  TEXT,
    source_uid    TEXT    NOT NULL DEFAULT '',
    read_error    TEXT    NOT NULL DEFAULT '',
    first_seen_ms INTEGER NOT NULL,
    last_seen_ms  INTEGER NOT NULL,
    rewritten_from TEXT   NOT NULL DEFAULT '',   -- catalog path of the source savepoint; '' unless origin is 'rewritten'
    rewritten_flow TEXT   NOT NULL DEFAULT ''    -- the flow whose DR offsets and topic names it holds
);
INSERT INTO savepoints_new (id, flink_target, job_id, job_name, path, kind, origin, trigger_ms, completed_ms, size_bytes,
    status, checkpoint_id, offsets_json, source_uid, read_error, first_seen_ms, last_seen_ms)
SELECT id, flink_target, job_id, job_name, path, kind, origin, trigger_ms, completed_ms, size_bytes,
    status, checkpoint_id, offsets_json, source_uid, read_error, first_seen_ms, last_seen_ms FROM savepoints;
DROP TABLE savepoints;
ALTER TABLE savepoints_new RENAME TO savepoints;
CREATE INDEX savepoints_job_id ON savepoints(job_id, trigger_ms);
CREATE INDEX savepoints_job_name ON savepoints(job_name, trigger_ms);
