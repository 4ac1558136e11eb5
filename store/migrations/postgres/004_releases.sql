-- One row per Helm release while a run (test or cleanup) of it executes:
-- the slot that keeps runs of one release apart across replicas. A release
-- is named by where it lives: cluster, namespace and Helm release name.
-- run_id is the run holding it; a slot whose run is no longer running is
-- free.
CREATE TABLE release_slots (
    cluster      TEXT NOT NULL,
    namespace    TEXT NOT NULL,
    release_name TEXT NOT NULL,
    run_id       BIGINT NOT NULL,
    taken_at     BIGINT NOT NULL,
    PRIMARY KEY (cluster, namespace, release_name)
);
