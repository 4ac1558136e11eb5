ALTER TABLE locks ADD COLUMN installation_id INTEGER NOT NULL DEFAULT 0;

-- One row per layer while a run (plan or apply) of it executes: the slot
-- that keeps runs of one layer apart across replicas. run_id is the run
-- holding it; a slot whose run is no longer running is free.
CREATE TABLE layer_slots (
    repo     TEXT NOT NULL,
    layer    TEXT NOT NULL,
    run_id   INTEGER NOT NULL,
    taken_at INTEGER NOT NULL,
    PRIMARY KEY (repo, layer)
);

-- The newest head of each PR Strata has seen: a running plan of another
-- head is cancelled.
CREATE TABLE pr_heads (
    repo       TEXT NOT NULL,
    pr         INTEGER NOT NULL,
    head_sha   TEXT NOT NULL,
    updated_at INTEGER NOT NULL,
    PRIMARY KEY (repo, pr)
);

-- The plans of one command (or autoplan), gathered into one comment once
-- all are done.
CREATE TABLE plan_batches (
    id         TEXT PRIMARY KEY,
    repo       TEXT NOT NULL,
    pr         INTEGER NOT NULL,
    total      INTEGER NOT NULL,
    commented  INTEGER NOT NULL DEFAULT 0,
    created_at INTEGER NOT NULL
);

CREATE TABLE plan_batch_items (
    batch_id TEXT NOT NULL,
    layer    TEXT NOT NULL,
    position INTEGER NOT NULL,
    report   TEXT NOT NULL,
    PRIMARY KEY (batch_id, layer)
);
