-- An MM2 internal topic can be deleted and recreated, or replaced by another
-- (offset-syncs.topic.location switched): its log restarts at offset 0. Every
-- position in such a topic is therefore stored with the incarnation of the
-- topic it was read from. An incarnation is one (cluster, topic, topic id);
-- numbers grow per flow in the order first seen, so (incarnation, log_offset)
-- is MM2's write order across incarnations. 0 is the legacy incarnation: rows
-- stored before incarnations were tracked; the first topic seen under the same
-- name whose log still covers their positions adopts it.
CREATE TABLE topic_incarnations (
    flow_id       INTEGER NOT NULL REFERENCES flows(id),
    cluster       TEXT    NOT NULL,   -- "source" or "target"
    topic         TEXT    NOT NULL,
    topic_id      TEXT    NOT NULL,   -- hex topic id from Metadata; "" when the broker has none
    incarnation   INTEGER NOT NULL,
    first_seen_ms INTEGER NOT NULL,
    note          TEXT    NOT NULL,   -- why a new incarnation started, for the flow page
    PRIMARY KEY (flow_id, cluster, topic, topic_id)
) WITHOUT ROWID;

CREATE TABLE ingest_positions_new (
    flow_id     INTEGER NOT NULL REFERENCES flows(id),
    topic       TEXT    NOT NULL,
    incarnation INTEGER NOT NULL,
    partition   INTEGER NOT NULL,
    next_offset INTEGER NOT NULL,
    updated_ms  INTEGER NOT NULL,
    PRIMARY KEY (flow_id, topic, incarnation, partition)
) WITHOUT ROWID;
INSERT INTO ingest_positions_new (flow_id, topic, incarnation, partition, next_offset, updated_ms)
    SELECT flow_id, topic, 0, partition, next_offset, updated_ms FROM ingest_positions;
DROP TABLE ingest_positions;
ALTER TABLE ingest_positions_new RENAME TO ingest_positions;

CREATE TABLE offset_syncs_new (
    flow_id     INTEGER NOT NULL REFERENCES flows(id),
    incarnation INTEGER NOT NULL,
    log_offset  INTEGER NOT NULL,
    topic       TEXT    NOT NULL,
    partition   INTEGER NOT NULL,
    upstream    INTEGER NOT NULL,
    downstream  INTEGER NOT NULL,
    record_ms   INTEGER NOT NULL,
    PRIMARY KEY (flow_id, incarnation, log_offset)
) WITHOUT ROWID;
INSERT INTO offset_syncs_new (flow_id, incarnation, log_offset, topic, partition, upstream, downstream, record_ms)
    SELECT flow_id, 0, log_offset, topic, partition, upstream, downstream, record_ms FROM offset_syncs;
DROP TABLE offset_syncs;
ALTER TABLE offset_syncs_new RENAME TO offset_syncs;

ALTER TABLE checkpoints ADD COLUMN incarnation INTEGER NOT NULL DEFAULT 0;
ALTER TABLE heartbeats ADD COLUMN incarnation INTEGER NOT NULL DEFAULT 0;
ALTER TABLE connect_offsets ADD COLUMN incarnation INTEGER NOT NULL DEFAULT 0;

-- Source records deleted (retention, DeleteRecords) before MirrorMaker 2
-- copied them: an incident, kept until deleted by hand, shown on the
-- overview until an operator acknowledges it.
CREATE TABLE loss_incidents (
    id           INTEGER PRIMARY KEY,
    flow_id      INTEGER NOT NULL REFERENCES flows(id),
    topic        TEXT    NOT NULL,   -- source topic
    partition    INTEGER NOT NULL,
    first_offset INTEGER NOT NULL,   -- first lost source offset
    last_offset  INTEGER NOT NULL,   -- last lost source offset
    lost         INTEGER NOT NULL,   -- offsets lost (records, or transaction markers among them)
    detected_ms  INTEGER NOT NULL,   -- when the gap was first seen
    confirmed_ms INTEGER NOT NULL,
    how          TEXT    NOT NULL,   -- how it was confirmed
    acked_ms     INTEGER,
    acked_by     TEXT
);
CREATE INDEX loss_incidents_flow ON loss_incidents (flow_id, detected_ms);
