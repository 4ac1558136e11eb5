-- The layers whose .strata.yaml on the default branch asks for drift
-- detection: their schedule, when the next run is due (unix ms, on the
-- servers' clock), what the last run found (state: '' before the first
-- run, clean, drifted, failed) at which commit, and the open issue that
-- reports the drift (0 for none). A restart reads when each layer is due
-- here, so it neither loses a run nor runs every layer again.
CREATE TABLE drift_layers (
    repo            TEXT NOT NULL,
    layer           TEXT NOT NULL,
    installation_id BIGINT NOT NULL,
    schedule        TEXT NOT NULL,
    next_due        BIGINT NOT NULL,
    state           TEXT NOT NULL DEFAULT '',
    last_run_at     BIGINT NOT NULL DEFAULT 0,
    last_sha        TEXT NOT NULL DEFAULT '',
    issue_number    BIGINT NOT NULL DEFAULT 0,
    PRIMARY KEY (repo, layer)
);

CREATE INDEX drift_layers_due ON drift_layers (next_due);
