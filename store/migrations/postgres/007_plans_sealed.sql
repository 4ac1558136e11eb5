-- Saved plans are encrypted from now on (seal, store/plans.go). Plans saved
-- before were stored in clear, holding the values Terraform marks
-- sensitive: their bytes are emptied, so that no plaintext stays at rest.
-- Their rows stay (strata/applied reads them); applying one answers "plan
-- is stale, run /plan". Old row versions go with the next VACUUM.
UPDATE plans SET plan = ''::bytea;
