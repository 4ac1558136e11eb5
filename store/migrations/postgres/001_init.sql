CREATE TABLE deliveries (
    id          TEXT PRIMARY KEY,
    event       TEXT NOT NULL,
    received_at BIGINT NOT NULL
);

CREATE TABLE locks (
    repo         TEXT NOT NULL,
    layer        TEXT NOT NULL,
    pr           BIGINT NOT NULL,
    head_sha     TEXT NOT NULL,
    holder       TEXT NOT NULL,
    locked_at    BIGINT NOT NULL,
    check_run_id BIGINT NOT NULL DEFAULT 0,
    PRIMARY KEY (repo, layer)
);

CREATE TABLE runs (
    id           BIGSERIAL PRIMARY KEY,
    job_id       BIGINT NOT NULL,
    attempt      BIGINT NOT NULL,
    kind         TEXT NOT NULL,
    repo         TEXT NOT NULL,
    pr           BIGINT NOT NULL DEFAULT 0,
    target       TEXT NOT NULL DEFAULT '',
    head_sha     TEXT NOT NULL DEFAULT '',
    status       TEXT NOT NULL,
    conclusion   TEXT NOT NULL DEFAULT '',
    summary      TEXT NOT NULL DEFAULT '',
    log          TEXT NOT NULL DEFAULT '',
    check_run_id BIGINT NOT NULL DEFAULT 0,
    started_at   BIGINT NOT NULL,
    heartbeat_at BIGINT NOT NULL,
    finished_at  BIGINT NOT NULL DEFAULT 0,
    UNIQUE (job_id, attempt)
);
CREATE INDEX runs_running ON runs (status, heartbeat_at);
CREATE INDEX runs_target ON runs (repo, target, status);

CREATE TABLE plans (
    repo        TEXT NOT NULL,
    pr          BIGINT NOT NULL,
    layer       TEXT NOT NULL,
    head_sha    TEXT NOT NULL,
    plan        BYTEA NOT NULL,
    summary     TEXT NOT NULL DEFAULT '',
    has_changes BIGINT NOT NULL DEFAULT 0,
    created_at  BIGINT NOT NULL,
    applied_at  BIGINT NOT NULL DEFAULT 0,
    PRIMARY KEY (repo, pr, layer, head_sha)
);

CREATE TABLE takeovers (
    repo       TEXT NOT NULL,
    sync       TEXT NOT NULL,
    pr         BIGINT NOT NULL,
    holder     TEXT NOT NULL,
    head_sha   TEXT NOT NULL,
    started_at BIGINT NOT NULL,
    expires_at BIGINT NOT NULL,
    PRIMARY KEY (repo, sync)
);
