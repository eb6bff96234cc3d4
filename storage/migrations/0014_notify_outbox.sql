-- Notifications: a durable outbox. An event is stored once (source_key
-- keeps a restart from storing it twice); each receiver that wants it gets
-- a delivery row, retried until the receiver takes it.
CREATE TABLE notify_events (
    id         INTEGER PRIMARY KEY,
    kind       TEXT    NOT NULL,
    source_key TEXT    NOT NULL UNIQUE,   -- "audit:<id>" or "flow:<name>:<kind>:<ms>"
    payload    TEXT    NOT NULL,          -- the JSON body of a generic webhook
    created_ms INTEGER NOT NULL
);

CREATE TABLE notify_deliveries (
    event_id     INTEGER NOT NULL REFERENCES notify_events(id),
    receiver     TEXT    NOT NULL,
    delivered_ms INTEGER,                 -- NULL while pending
    attempts     INTEGER NOT NULL DEFAULT 0,
    next_ms      INTEGER NOT NULL,
    last_error   TEXT    NOT NULL DEFAULT '',
    PRIMARY KEY (receiver, event_id)
);
CREATE INDEX notify_pending ON notify_deliveries(receiver, event_id) WHERE delivered_ms IS NULL;

-- Where the feeder stands: the last audit record it turned into events, and
-- the last status told per flow, so a restart neither repeats nor misses.
CREATE TABLE notify_state (
    key   TEXT PRIMARY KEY,               -- "audit" or "flow:<name>"
    value TEXT NOT NULL
);
