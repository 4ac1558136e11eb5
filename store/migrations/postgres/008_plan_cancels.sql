-- A /cancel of a queued or running plan: who asked, and when. The plan job
-- reads it before it starts and while Terraform runs (a new /plan starts a
-- new batch layer, so a cancel never reaches a later plan). settled: the
-- plan job has its outcome and reports it; a /cancel no longer lists it.
ALTER TABLE plan_batch_layers ADD COLUMN cancelled_by TEXT NOT NULL DEFAULT '';
ALTER TABLE plan_batch_layers ADD COLUMN cancelled_at BIGINT NOT NULL DEFAULT 0;
ALTER TABLE plan_batch_layers ADD COLUMN settled BIGINT NOT NULL DEFAULT 0;
