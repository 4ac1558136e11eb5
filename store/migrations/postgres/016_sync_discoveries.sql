-- What sync_discovery found at the default branch's last pushed commit
-- (docs/hydration.md): each sync with the file that defines it, the Sync
-- files the selector left out, and those that could not be used with their
-- file and line, as JSON, for the web UI's repository page, which reads
-- the store only.
CREATE TABLE sync_discoveries (
    repo       TEXT PRIMARY KEY,
    commit_sha TEXT NOT NULL,
    syncs      TEXT NOT NULL,
    skipped    TEXT NOT NULL,
    problems   TEXT NOT NULL,
    updated_at BIGINT NOT NULL
);
