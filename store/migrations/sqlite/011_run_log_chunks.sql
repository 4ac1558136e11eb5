-- A run's log is a sequence of chunks, each appended by an insert: growing
-- a log by rewriting it whole (log || text) cost time quadratic in its size.
-- start is the chunk's byte offset in the log, so a reader that follows the
-- log (the web UI's live log) reads only the chunks past what it has.
-- log_bytes is the log's size and log_chunks the next chunk's seq; log_cut says it reached
-- the server's limit (run_log_limit) and the note saying so is written.
CREATE TABLE run_log_chunks (
    run_id INTEGER NOT NULL,
    seq    INTEGER NOT NULL,
    start  INTEGER NOT NULL,
    size   INTEGER NOT NULL,
    text   TEXT NOT NULL,
    PRIMARY KEY (run_id, seq)
);

ALTER TABLE runs ADD COLUMN log_bytes INTEGER NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN log_chunks INTEGER NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN log_cut INTEGER NOT NULL DEFAULT 0;

-- The logs stored before become each run's first chunk.
INSERT INTO run_log_chunks (run_id, seq, start, size, text)
    SELECT id, 0, 0, length(CAST(log AS BLOB)), log FROM runs WHERE log <> '';
UPDATE runs SET log_bytes = length(CAST(log AS BLOB)), log_chunks = 1, log = '' WHERE log <> '';
