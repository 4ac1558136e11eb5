-- The base a layer's plans are made on: each apply of a layer moves its
-- generation on, and a plan records the generation it was made at (read
-- while it held the layer's slot). A plan made before another PR's apply
-- is stale (lock: on_apply lets several PRs plan one layer).
CREATE TABLE layer_applies (
    repo       TEXT NOT NULL,
    layer      TEXT NOT NULL,
    generation INTEGER NOT NULL,
    pr         INTEGER NOT NULL,
    head_sha   TEXT NOT NULL,
    applied_at INTEGER NOT NULL,
    PRIMARY KEY (repo, layer)
);

ALTER TABLE plans ADD COLUMN base_generation INTEGER NOT NULL DEFAULT 0;
