-- A run's log is a sequence of chunks, each appended by an insert: growing
-- a log by rewriting it whole (log || text) cost time quadratic in its size.
-- start is the chunk's byte offset in the log, so a reader that follows the
-- log (the web UI's live log) reads only the chunks past what it has.
-- log_bytes is the log's size and log_chunks the next chunk's seq; log_cut says it reached
-- the server's limit (run_log_limit) and the note saying so is written.
CREATE TABLE run_log_chunks (
    run_id BIGINT NOT NULL,
    seq    BIGINT NOT NULL,
    start  BIGINT NOT NULL,
    size   BIGINT NOT NULL,
    text   TEXT NOT NULL,
    PRIMARY KEY (run_id, seq)
);

ALTER TABLE runs ADD COLUMN log_bytes BIGINT NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN log_chunks BIGINT NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN log_cut BOOLEAN NOT NULL DEFAULT false;

-- The logs stored before become each run's first chunk.
INSERT INTO run_log_chunks (run_id, seq, start, size, text)
    SELECT id, 0, 0, octet_length(log), log FROM runs WHERE log <> '';
UPDATE runs SET log_bytes = octet_length(log), log_chunks = 1, log = '' WHERE log <> '';
