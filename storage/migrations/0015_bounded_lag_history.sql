-- Bounded lag history (issue 17). Every table retention deletes from has
-- its key start with (flow_id, time), so a prune is an index range delete.

-- Topic names of the lag tables, numbered per flow: a row carries the
-- number, not the name.
CREATE TABLE lag_topics (
    id      INTEGER PRIMARY KEY,
    flow_id INTEGER NOT NULL REFERENCES flows(id),
    name    TEXT    NOT NULL,
    UNIQUE (flow_id, name)
);

-- One row per topic per saved minute. Its presence says the minute was
-- saved: a partition of the topic (partition < partitions) without a row in
-- partition_lag at that minute was caught up. NULL is unknown.
CREATE TABLE topic_lag (
    flow_id          INTEGER NOT NULL REFERENCES flows(id),
    at_ms            INTEGER NOT NULL,
    topic_id         INTEGER NOT NULL REFERENCES lag_topics(id),
    partitions       INTEGER NOT NULL,
    lagging          INTEGER NOT NULL, -- partitions with offsets behind > 0
    unknown          INTEGER NOT NULL, -- partitions whose lag or age is unknown or only a lower bound
    max_lag_ms       INTEGER,          -- counting lower bounds; NULL when no partition had either
    max_lag_at_least INTEGER NOT NULL, -- 1: max_lag_ms is only a lower bound (unknown > 0)
    total_lag_messages INTEGER,        -- over partitions with known lag (a lower bound when unknown > 0)
    max_lag_messages INTEGER,
    PRIMARY KEY (flow_id, at_ms, topic_id)
) WITHOUT ROWID;
CREATE INDEX topic_lag_by_topic ON topic_lag(flow_id, topic_id, at_ms);

-- Partitions that lagged (or whose lag or age was unknown) at a saved
-- minute; a caught-up partition has no row.
CREATE TABLE partition_lag (
    flow_id         INTEGER NOT NULL REFERENCES flows(id),
    at_ms           INTEGER NOT NULL,
    topic_id        INTEGER NOT NULL REFERENCES lag_topics(id),
    partition       INTEGER NOT NULL,
    source_end      INTEGER,
    replicated      INTEGER,
    lag_messages    INTEGER,
    lag_ms          INTEGER,
    lag_ms_at_least INTEGER,
    PRIMARY KEY (flow_id, at_ms, topic_id, partition)
) WITHOUT ROWID;

-- The last saved figures of every partition of a flow, one encoded row per
-- flow (storage/lastknown.go), replaced at every saved minute.
CREATE TABLE partition_last_known (
    flow_id  INTEGER PRIMARY KEY REFERENCES flows(id),
    at_ms    INTEGER NOT NULL,
    snapshot BLOB    NOT NULL
);

-- The newest row of every partition from before this migration, read until
-- the flow's first snapshot replaces it (one row per partition: bounded).
CREATE TABLE partition_last_legacy (
    flow_id      INTEGER NOT NULL REFERENCES flows(id),
    topic        TEXT    NOT NULL,
    partition    INTEGER NOT NULL,
    at_ms        INTEGER NOT NULL,
    source_end   INTEGER,
    replicated   INTEGER,
    lag_messages INTEGER,
    lag_ms       INTEGER,
    PRIMARY KEY (flow_id, topic, partition)
) WITHOUT ROWID;

-- Raw flow samples learn whether the RPO was a lower bound (NULL on rows
-- written before: not recorded, so never counted as exact) and the
-- largest partition lag in offsets.
ALTER TABLE flow_lag_samples ADD COLUMN rpo_at_least INTEGER;
ALTER TABLE flow_lag_samples ADD COLUMN max_lag_messages INTEGER;

-- Per-minute rollups of the flow samples, kept for retention.rpo_history;
-- a minute is rolled up once it is complete.
-- A minute is within an objective only if unknown = 0, at_least = 0 and
-- max_rpo_ms is within it.
CREATE TABLE flow_rpo_minutes (
    flow_id     INTEGER NOT NULL REFERENCES flows(id),
    minute_ms   INTEGER NOT NULL,
    samples     INTEGER NOT NULL,
    unknown     INTEGER NOT NULL, -- samples whose RPO was unknown
    at_least    INTEGER NOT NULL, -- samples whose RPO was a lower bound (or not recorded as exact)
    max_rpo_ms  INTEGER,          -- over samples with a figure, lower bounds included; NULL when none had one
    max_lag_messages   INTEGER,   -- the largest partition lag in offsets seen in the minute
    max_total_lag_messages INTEGER, -- the largest flow total in offsets seen in the minute
    worst_status TEXT    NOT NULL,
    status_rank  INTEGER NOT NULL, -- OK 0 < WARNING 1 < UNKNOWN 2 < CRITICAL 3 < BROKEN 4
    PRIMARY KEY (flow_id, minute_ms)
) WITHOUT ROWID;

-- Existing history stays readable: split and moved. The flow samples are
-- rolled up by minute from flow_lag_samples when the next sample closes a
-- minute (storage/lag.go), the first time from the oldest raw sample.
INSERT INTO lag_topics(flow_id, name) SELECT DISTINCT flow_id, topic FROM partition_lag_samples;

INSERT INTO topic_lag
SELECT s.flow_id, s.at_ms, t.id, count(*),
       sum(coalesce(s.lag_messages, 0) > 0),
       sum(s.lag_messages IS NULL OR s.lag_ms IS NULL),
       max(s.lag_ms), max(s.lag_messages IS NULL OR s.lag_ms IS NULL),
       CASE WHEN count(s.lag_messages) > 0 THEN sum(s.lag_messages) END, max(s.lag_messages)
FROM partition_lag_samples s JOIN lag_topics t ON t.flow_id = s.flow_id AND t.name = s.topic
GROUP BY s.flow_id, s.at_ms, t.id;

-- A row that was not caught up (lag 0 in offsets and in time) is kept.
INSERT INTO partition_lag
SELECT s.flow_id, s.at_ms, t.id, s.partition, s.source_end, s.replicated, s.lag_messages, s.lag_ms, NULL
FROM partition_lag_samples s JOIN lag_topics t ON t.flow_id = s.flow_id AND t.name = s.topic
WHERE s.lag_messages IS NULL OR s.lag_ms IS NULL OR s.lag_messages <> 0 OR s.lag_ms <> 0;

INSERT INTO partition_last_legacy
SELECT flow_id, topic, partition, max(at_ms), source_end, replicated, lag_messages, lag_ms
FROM partition_lag_samples GROUP BY flow_id, topic, partition;

DROP TABLE partition_lag_samples;
