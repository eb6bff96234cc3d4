-- The last lost-to-DR figures read from the old primary, per partition of
-- a failover run: shown, with their read time, while the primary cannot
-- be read, also after a console restart. figures is the partition's
-- figures as the runbook encodes them (JSON); as_of_ms when they were read.
CREATE TABLE lost_last (
    run_id    INTEGER NOT NULL REFERENCES failover_runs(id),
    topic     TEXT    NOT NULL,
    partition INTEGER NOT NULL,
    as_of_ms  INTEGER NOT NULL,
    figures   TEXT    NOT NULL,
    PRIMARY KEY (run_id, topic, partition)
) WITHOUT ROWID;
