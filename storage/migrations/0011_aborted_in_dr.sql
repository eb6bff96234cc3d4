-- Batches of aborted transactions MirrorMaker 2 has copied to DR as
-- ordinary records (MM2 reads read_uncommitted): DR consumers read them,
-- the primary's readers never did. Recorded by the lag reader once MM2 is
-- past them, so `drconsole translate` can warn about them after the primary
-- is gone. Keyed by the source topic's id too: a recreated topic restarts
-- its offsets.
CREATE TABLE aborted_in_dr (
    flow_id      INTEGER NOT NULL REFERENCES flows(id),
    topic        TEXT    NOT NULL,   -- primary (source) topic
    topic_id     TEXT    NOT NULL,   -- its id (hex) when the batch was seen
    partition    INTEGER NOT NULL,
    first_offset INTEGER NOT NULL,   -- source offsets of the batch
    last_offset  INTEGER NOT NULL,
    records      INTEGER NOT NULL,
    at_ms        INTEGER NOT NULL,   -- when MM2 was seen past it
    PRIMARY KEY (flow_id, topic, topic_id, partition, last_offset)
) WITHOUT ROWID;
