-- Consumer groups' committed offsets on the primary, recorded periodically
-- while the primary answers. When it is gone, these and MM2's checkpoints
-- are what the console knows of where each group was; MM2 writes no
-- checkpoint for an offset it cannot translate, so checkpoints alone can
-- miss partitions.
CREATE TABLE primary_group_offsets (
    flow_id   INTEGER NOT NULL REFERENCES flows(id),
    group_id  TEXT    NOT NULL,
    topic     TEXT    NOT NULL,   -- primary (source) topic
    partition INTEGER NOT NULL,
    offset    INTEGER NOT NULL,   -- next offset to read
    at_ms     INTEGER NOT NULL,   -- when it was read
    PRIMARY KEY (flow_id, group_id, topic, partition)
) WITHOUT ROWID;
