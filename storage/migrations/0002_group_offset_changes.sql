-- Every change drconsole made to a DR consumer group's offsets, with the
-- offsets it had before, so each change can be undone. Written before the
-- commit (status 'applying') and updated after, so a crash in between
-- still leaves the previous offsets on record.
CREATE TABLE group_offset_changes (
    id        INTEGER PRIMARY KEY,
    flow_id   INTEGER NOT NULL REFERENCES flows(id),
    group_id  TEXT    NOT NULL,
    at_ms     INTEGER NOT NULL,
    actor     TEXT    NOT NULL,
    reason    TEXT    NOT NULL,
    status    TEXT    NOT NULL CHECK (status IN ('applying', 'applied', 'failed')),
    error     TEXT    NOT NULL DEFAULT '',
    -- JSON array of {"topic","partition","previous" (null: none),"applied"}
    changes   TEXT    NOT NULL
);
CREATE INDEX group_offset_changes_group ON group_offset_changes(flow_id, group_id, id);
