-- Flows are referenced by a small integer to keep history rows compact.
CREATE TABLE flows (
    id   INTEGER PRIMARY KEY,
    name TEXT NOT NULL UNIQUE
);

-- Where ingestion of each internal topic partition resumes: written in the
-- same transaction as the records it covers, so nothing is lost or doubled.
CREATE TABLE ingest_positions (
    flow_id     INTEGER NOT NULL REFERENCES flows(id),
    topic       TEXT    NOT NULL,
    partition   INTEGER NOT NULL,
    next_offset INTEGER NOT NULL,
    updated_ms  INTEGER NOT NULL,
    PRIMARY KEY (flow_id, topic, partition)
) WITHOUT ROWID;

-- Every offset sync read from MM2's offset-syncs topic. log_offset is the
-- record's offset in that topic: the order MM2 wrote them. Clustered by it so
-- ingestion only appends (300k+ rows/s); per-partition history is served
-- from the console's in-memory index, built from this table at start-up.
CREATE TABLE offset_syncs (
    flow_id    INTEGER NOT NULL REFERENCES flows(id),
    log_offset INTEGER NOT NULL,
    topic      TEXT    NOT NULL,   -- upstream (source) topic
    partition  INTEGER NOT NULL,
    upstream   INTEGER NOT NULL,
    downstream INTEGER NOT NULL,
    record_ms  INTEGER NOT NULL,   -- record timestamp (MM2 producer CreateTime)
    PRIMARY KEY (flow_id, log_offset)
) WITHOUT ROWID;

-- The latest MM2 checkpoint per group and partition.
CREATE TABLE checkpoints (
    flow_id    INTEGER NOT NULL REFERENCES flows(id),
    group_id   TEXT    NOT NULL,
    topic      TEXT    NOT NULL,   -- target-side topic name
    partition  INTEGER NOT NULL,
    upstream   INTEGER NOT NULL,
    downstream INTEGER NOT NULL,
    metadata   TEXT    NOT NULL,
    log_offset INTEGER NOT NULL,
    record_ms  INTEGER NOT NULL,
    PRIMARY KEY (flow_id, group_id, topic, partition)
) WITHOUT ROWID;

-- The newest replicated heartbeat per (source, target) alias pair.
CREATE TABLE heartbeats (
    flow_id      INTEGER NOT NULL REFERENCES flows(id),
    source_alias TEXT    NOT NULL,
    target_alias TEXT    NOT NULL,
    emitted_ms   INTEGER NOT NULL,
    log_offset   INTEGER NOT NULL,
    count        INTEGER NOT NULL,
    PRIMARY KEY (flow_id, source_alias, target_alias)
) WITHOUT ROWID;

-- MirrorSourceConnector's committed position per source partition, from the
-- Connect offsets topic: last_offset is the last replicated upstream offset.
CREATE TABLE connect_offsets (
    flow_id     INTEGER NOT NULL REFERENCES flows(id),
    topic       TEXT    NOT NULL,
    partition   INTEGER NOT NULL,
    last_offset INTEGER NOT NULL,
    log_offset  INTEGER NOT NULL,
    record_ms   INTEGER NOT NULL,
    PRIMARY KEY (flow_id, topic, partition)
) WITHOUT ROWID;

-- One row per lag refresh and flow: the RPO over time. NULL is unknown.
CREATE TABLE flow_lag_samples (
    flow_id      INTEGER NOT NULL REFERENCES flows(id),
    at_ms        INTEGER NOT NULL,
    rpo_ms       INTEGER,
    lag_messages INTEGER,
    heartbeat_age_ms INTEGER,
    status       TEXT    NOT NULL,
    PRIMARY KEY (flow_id, at_ms)
) WITHOUT ROWID;

-- Per-partition lag, sampled less often than the flow figure.
CREATE TABLE partition_lag_samples (
    flow_id      INTEGER NOT NULL REFERENCES flows(id),
    topic        TEXT    NOT NULL,
    partition    INTEGER NOT NULL,
    at_ms        INTEGER NOT NULL,
    source_end   INTEGER,
    replicated   INTEGER,
    lag_messages INTEGER,
    lag_ms       INTEGER,
    PRIMARY KEY (flow_id, topic, partition, at_ms)
) WITHOUT ROWID;
