-- A takeover that ended (released, its PR closed, expired) whose hand-back is
-- not enqueued yet: the hydration of the default branch's head into its
-- destination, which tells the PR. Ending a takeover moves its row here in one
-- transaction, and the row is deleted only once the hand-back job is
-- enqueued, so a GitHub error or a crash in between leaves it for a retry or
-- the periodic sweep to finish. reason is how it ended, for the check and the
-- PR. One row per PR that held the sync, so that a new takeover is never
-- blocked by an older one's ending.
CREATE TABLE takeover_endings (
    repo            TEXT NOT NULL,
    sync            TEXT NOT NULL,
    pr              BIGINT NOT NULL,
    holder          TEXT NOT NULL,
    head_sha        TEXT NOT NULL,
    started_at      BIGINT NOT NULL,
    expires_at      BIGINT NOT NULL,
    check_run_id    BIGINT NOT NULL DEFAULT 0,
    installation_id BIGINT NOT NULL DEFAULT 0,
    ended_at        BIGINT NOT NULL,
    reason          TEXT NOT NULL DEFAULT '',
    PRIMARY KEY (repo, sync, pr)
);
