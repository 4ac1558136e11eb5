package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// PolicyEvaluation is the last evaluation of a layer's policy sets for a
// PR, of the plan at HeadSHA made at PlanAt (Plan.CreatedAt).
type PolicyEvaluation struct {
	Repo    string
	PR      int
	Layer   string
	HeadSHA string
	PlanAt  time.Time
	// PolicySHA is the default branch commit the repository's sets were
	// read at.
	PolicySHA string
	// Sets is each set's outcome, as JSON the layers capability writes
	// (redacted before it is stored).
	Sets        string
	EvaluatedAt time.Time
}

// PolicyApproval is an owner's approval of one set's denials for one plan.
type PolicyApproval struct {
	Repo       string
	PR         int
	Layer      string
	HeadSHA    string
	PlanAt     time.Time
	Set        string
	Approver   string
	ApprovedAt time.Time
}

// SavePolicyEvaluation records the evaluation of a plan, replacing the
// layer's earlier one for the PR and dropping the approvals of any other
// plan: an approval is for one plan only.
func (s *Store) SavePolicyEvaluation(ctx context.Context, e PolicyEvaluation) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	planAt := e.PlanAt.UnixMilli()
	if _, err := tx.ExecContext(ctx, s.rebind(`INSERT INTO policy_evaluations (repo, pr, layer, head_sha, plan_at, policy_sha, sets, evaluated_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (repo, pr, layer) DO UPDATE SET head_sha = excluded.head_sha, plan_at = excluded.plan_at,
		policy_sha = excluded.policy_sha, sets = excluded.sets, evaluated_at = excluded.evaluated_at`),
		e.Repo, e.PR, e.Layer, e.HeadSHA, planAt, e.PolicySHA, e.Sets, now()); err != nil {
		return fmt.Errorf("save the policy evaluation of %s#%d %s: %w", e.Repo, e.PR, e.Layer, err)
	}
	if _, err := tx.ExecContext(ctx, s.rebind(`DELETE FROM policy_approvals WHERE repo = ? AND pr = ? AND layer = ? AND (head_sha <> ? OR plan_at <> ?)`),
		e.Repo, e.PR, e.Layer, e.HeadSHA, planAt); err != nil {
		return err
	}
	return tx.Commit()
}

const policyEvaluationColumns = `repo, pr, layer, head_sha, plan_at, policy_sha, sets, evaluated_at`

func scanPolicyEvaluation(row rowScanner) (*PolicyEvaluation, error) {
	var e PolicyEvaluation
	var planAt, at int64
	if err := row.Scan(&e.Repo, &e.PR, &e.Layer, &e.HeadSHA, &planAt, &e.PolicySHA, &e.Sets, &at); err != nil {
		return nil, err
	}
	e.PlanAt, e.EvaluatedAt = fromMillis(planAt), fromMillis(at)
	return &e, nil
}

// PolicyEvaluationOf is the layer's last evaluation for the PR, or
// ErrNotFound.
func (s *Store) PolicyEvaluationOf(ctx context.Context, repo string, pr int, layer string) (*PolicyEvaluation, error) {
	e, err := scanPolicyEvaluation(s.queryRow(ctx, `SELECT `+policyEvaluationColumns+` FROM policy_evaluations WHERE repo = ? AND pr = ? AND layer = ?`,
		repo, pr, layer))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNotFound
	}
	return e, err
}

// LastPolicyEvaluation is the newest evaluation of a layer, of any PR, or
// ErrNotFound: what the web UI's layer page shows.
func (s *Store) LastPolicyEvaluation(ctx context.Context, repo, layer string) (*PolicyEvaluation, error) {
	e, err := scanPolicyEvaluation(s.queryRow(ctx, `SELECT `+policyEvaluationColumns+` FROM policy_evaluations WHERE repo = ? AND layer = ?
		ORDER BY evaluated_at DESC LIMIT 1`, repo, layer))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNotFound
	}
	return e, err
}

// ApprovePolicy records an owner's approval of a set's denials for a plan;
// approving again keeps the first approval.
func (s *Store) ApprovePolicy(ctx context.Context, a PolicyApproval) error {
	_, err := s.exec(ctx, `INSERT INTO policy_approvals (repo, pr, layer, head_sha, plan_at, policy_set, approver, approved_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
		a.Repo, a.PR, a.Layer, a.HeadSHA, a.PlanAt.UnixMilli(), a.Set, a.Approver, now())
	if err != nil {
		return fmt.Errorf("approve policy set %s for %s#%d %s: %w", a.Set, a.Repo, a.PR, a.Layer, err)
	}
	return nil
}

// PolicyApprovals are the approvals of a plan's denials, by set.
func (s *Store) PolicyApprovals(ctx context.Context, repo string, pr int, layer, headSHA string, planAt time.Time) ([]PolicyApproval, error) {
	return queryAll(ctx, s, func(r rowScanner) (PolicyApproval, error) {
		var a PolicyApproval
		var p, at int64
		err := r.Scan(&a.Repo, &a.PR, &a.Layer, &a.HeadSHA, &p, &a.Set, &a.Approver, &at)
		a.PlanAt, a.ApprovedAt = fromMillis(p), fromMillis(at)
		return a, err
	}, `SELECT repo, pr, layer, head_sha, plan_at, policy_set, approver, approved_at FROM policy_approvals
		WHERE repo = ? AND pr = ? AND layer = ? AND head_sha = ? AND plan_at = ? ORDER BY policy_set`,
		repo, pr, layer, headSHA, planAt.UnixMilli())
}
