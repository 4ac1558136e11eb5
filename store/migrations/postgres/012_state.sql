-- Managed Terraform state (docs/state.md): each layer's state versions,
-- sealed, newest by id; Terraform's state lock; the per-run credentials
-- of the http backend (only their SHA-256 is kept).
CREATE TABLE state_versions (
    id               BIGSERIAL PRIMARY KEY,
    repo             TEXT NOT NULL,
    layer            TEXT NOT NULL,
    workspace        TEXT NOT NULL,
    serial           BIGINT NOT NULL,
    lineage          TEXT NOT NULL,
    size             BIGINT NOT NULL,
    digest           BYTEA NOT NULL,
    content          BYTEA NOT NULL,
    created_at       BIGINT NOT NULL,
    run_id           BIGINT NOT NULL,
    pr               BIGINT NOT NULL,
    commit_sha       TEXT NOT NULL,
    by_login         TEXT NOT NULL,
    kind             TEXT NOT NULL,
    rolled_back_from BIGINT NOT NULL
);
CREATE INDEX state_versions_key ON state_versions (repo, layer, workspace, id);

CREATE TABLE state_locks (
    repo       TEXT NOT NULL,
    layer      TEXT NOT NULL,
    workspace  TEXT NOT NULL,
    lock_id    TEXT NOT NULL,
    info       BYTEA NOT NULL,
    run_id     BIGINT NOT NULL,
    created_at BIGINT NOT NULL,
    PRIMARY KEY (repo, layer, workspace)
);
CREATE INDEX state_locks_run ON state_locks (run_id);

CREATE TABLE state_credentials (
    token_hash BYTEA PRIMARY KEY,
    repo       TEXT NOT NULL,
    layer      TEXT NOT NULL,
    workspace  TEXT NOT NULL,
    run_id     BIGINT NOT NULL,
    mode       TEXT NOT NULL,
    created_at BIGINT NOT NULL
);
CREATE INDEX state_credentials_run ON state_credentials (run_id);
