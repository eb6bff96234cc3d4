-- The savepoint catalog: savepoints and retained checkpoints seen in Flink's
-- REST checkpoint history, found in scanned directories, registered by hand
-- or triggered through the console. Rows are never deleted: the catalog
-- remembers what Flink forgot when its JobManager died.
CREATE TABLE savepoints (
    id            INTEGER PRIMARY KEY,
    flink_target  TEXT    NOT NULL DEFAULT '',   -- config flink_targets name; '' when unknown (scan, manual)
    job_id        TEXT    NOT NULL DEFAULT '',
    job_name      TEXT    NOT NULL DEFAULT '',
    path          TEXT    NOT NULL UNIQUE,       -- as Flink reports it: file:/..., s3://...
    kind          TEXT    NOT NULL CHECK (kind IN ('savepoint', 'checkpoint')),
    origin        TEXT    NOT NULL CHECK (origin IN ('rest', 'scan', 'manual', 'triggered')),
    trigger_ms    INTEGER,                       -- NULL: unknown
    completed_ms  INTEGER,
    size_bytes    INTEGER,
    status        TEXT    NOT NULL CHECK (status IN ('COMPLETED', 'FAILED', 'IN_PROGRESS', 'unknown')),
    checkpoint_id INTEGER,
    offsets_json  TEXT,                          -- {"events-0": 123, ...}; NULL: not read (yet)
    source_uid    TEXT    NOT NULL DEFAULT '',
    read_error    TEXT    NOT NULL DEFAULT '',
    first_seen_ms INTEGER NOT NULL,
    last_seen_ms  INTEGER NOT NULL
);
CREATE INDEX savepoints_job_id ON savepoints(job_id, trigger_ms);
CREATE INDEX savepoints_job_name ON savepoints(job_name, trigger_ms);
