-- auto_apply: on_merge (docs/governance.md). plan_changes keeps a plan's
-- resource changes as they were reviewed, sealed (their values may be
-- sensitive), past the PR's close: the plan at the merge commit is
-- compared with them. merge_applies is the post-merge apply of each merged
-- PR's layer, in merge order (merged_at, then id), with its named state.
CREATE TABLE plan_changes (
    repo       TEXT NOT NULL,
    pr         BIGINT NOT NULL,
    layer      TEXT NOT NULL,
    head_sha   TEXT NOT NULL,
    changes    BYTEA NOT NULL,
    created_at BIGINT NOT NULL,
    PRIMARY KEY (repo, pr, layer, head_sha)
);

CREATE TABLE merge_applies (
    id              BIGSERIAL PRIMARY KEY,
    repo            TEXT NOT NULL,
    pr              BIGINT NOT NULL,
    layer           TEXT NOT NULL,
    head_sha        TEXT NOT NULL,
    merge_sha       TEXT NOT NULL,
    merged_at       BIGINT NOT NULL,
    state           TEXT NOT NULL,
    detail          TEXT NOT NULL,
    check_run_id    BIGINT NOT NULL,
    installation_id BIGINT NOT NULL,
    updated_at      BIGINT NOT NULL,
    UNIQUE (repo, pr, layer)
);
CREATE INDEX merge_applies_order ON merge_applies (repo, layer, merged_at, id);
