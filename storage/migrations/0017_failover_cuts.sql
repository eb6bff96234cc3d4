-- What a failover recorded of each mirrored partition once it had stopped
-- the mirror (model.CutPosition): DR's log end then, the newest offset sync
-- below it and MM2's committed position. It tells, after the failover,
-- which of the old primary's records never reached DR. NULL: not known.
CREATE TABLE failover_cuts (
    run_id       INTEGER NOT NULL REFERENCES failover_runs(id),
    topic        TEXT    NOT NULL,
    partition    INTEGER NOT NULL,
    remote_topic TEXT    NOT NULL,
    dr_end       INTEGER,
    sync_up      INTEGER,
    sync_down    INTEGER,
    connect_last INTEGER,
    at_ms        INTEGER NOT NULL,
    PRIMARY KEY (run_id, topic, partition)
) WITHOUT ROWID;
