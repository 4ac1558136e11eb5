-- Policy as code (docs/governance.md). The last evaluation of a layer's
-- policy sets for a PR: of which plan (its head and the plan's created_at),
-- with the default branch commit the repository's sets were read at, and
-- each set's outcome (JSON, redacted). A new plan replaces it.
CREATE TABLE policy_evaluations (
    repo         TEXT NOT NULL,
    pr           INTEGER NOT NULL,
    layer        TEXT NOT NULL,
    head_sha     TEXT NOT NULL,
    plan_at      INTEGER NOT NULL,
    policy_sha   TEXT NOT NULL,
    sets         TEXT NOT NULL,
    evaluated_at INTEGER NOT NULL,
    PRIMARY KEY (repo, pr, layer)
);

-- An owner's /approve-policies of one set's denials, for one plan: a new
-- commit or a new plan (another head_sha or plan_at) is not approved.
CREATE TABLE policy_approvals (
    repo        TEXT NOT NULL,
    pr          INTEGER NOT NULL,
    layer       TEXT NOT NULL,
    head_sha    TEXT NOT NULL,
    plan_at     INTEGER NOT NULL,
    policy_set  TEXT NOT NULL,
    approver    TEXT NOT NULL,
    approved_at INTEGER NOT NULL,
    PRIMARY KEY (repo, pr, layer, head_sha, plan_at, policy_set)
);
