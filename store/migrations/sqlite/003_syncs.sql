-- The takeover check mirrors the row; the installation lets the expiry job
-- and repairs reach GitHub without an event.
ALTER TABLE takeovers ADD COLUMN check_run_id INTEGER NOT NULL DEFAULT 0;
ALTER TABLE takeovers ADD COLUMN installation_id INTEGER NOT NULL DEFAULT 0;

-- The last hydration of each sync from the default branch: what kustomize
-- read (a push hydrates the sync only when one of these changed), the source
-- commit, the images pinned to digests (re-resolved by the moved-tag job) and
-- the sync's config as it was hydrated (JSON). failed_commit is a later
-- commit whose build failed: the inputs are still the last good ones, but the
-- next push hydrates whatever it changes.
CREATE TABLE sync_hydrations (
    repo            TEXT NOT NULL,
    sync            TEXT NOT NULL,
    installation_id INTEGER NOT NULL DEFAULT 0,
    spec            TEXT NOT NULL DEFAULT '',
    inputs          TEXT NOT NULL DEFAULT '[]',
    source_commit   TEXT NOT NULL,
    pinned          TEXT NOT NULL DEFAULT '[]',
    dest_commit     TEXT NOT NULL DEFAULT '',
    failed_commit   TEXT NOT NULL DEFAULT '',
    hydrated_at     INTEGER NOT NULL,
    PRIMARY KEY (repo, sync)
);
