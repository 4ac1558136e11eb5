-- Each layer a plan batch has started: its plan check, and whether its plan
-- job is enqueued (or its blocked report made). A retried event job goes on
-- from here: it finishes the layers an earlier attempt did not, and does no
-- layer twice.
CREATE TABLE plan_batch_layers (
    batch_id     TEXT NOT NULL,
    layer        TEXT NOT NULL,
    check_run_id BIGINT NOT NULL DEFAULT 0,
    started      BIGINT NOT NULL DEFAULT 0,
    PRIMARY KEY (batch_id, layer)
);
