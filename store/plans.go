package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"strata.dev/strata/seal"
)

// Plan is a saved Terraform plan of a layer at a PR's head commit: what
// /apply applies, byte for byte.
type Plan struct {
	Repo    string
	PR      int
	Layer   string
	HeadSHA string
	// PlanFile is the plan as Terraform wrote it. It is stored sealed (see
	// UseKeys); PlanAt opens it, PlansOfPR leaves it out.
	PlanFile   []byte
	Summary    string // redacted, for reports
	HasChanges bool
	CreatedAt  time.Time
	AppliedAt  time.Time
	// BaseGeneration is the layer's generation (LastApply) when the plan
	// ran: a later apply makes the plan stale.
	BaseGeneration int64
}

const planColumns = `repo, pr, layer, head_sha, summary, has_changes, created_at, applied_at, base_generation`

func scanPlan(row interface{ Scan(...any) error }, more ...any) (*Plan, error) {
	var p Plan
	var changes, created, applied int64
	dest := append([]any{&p.Repo, &p.PR, &p.Layer, &p.HeadSHA, &p.Summary, &changes, &created, &applied, &p.BaseGeneration}, more...)
	if err := row.Scan(dest...); err != nil {
		return nil, err
	}
	p.HasChanges = changes != 0
	p.CreatedAt, p.AppliedAt = fromMillis(created), fromMillis(applied)
	return &p, nil
}

// UseKeys sets the keys that seal plan files: a plan file holds the values
// Terraform marks sensitive, so a copy of the database must not show them.
// A store without keys refuses to save or open plans.
func (s *Store) UseKeys(k *seal.Keys) { s.keys = k }

// ErrPlanUnsealed is a saved plan stored before plans were encrypted (and
// emptied by the migration that introduced encryption): it is never
// trusted, since anyone who could write the database could have written
// it. It must be planned again.
var ErrPlanUnsealed = errors.New("the saved plan was stored before plans were encrypted")

// planContext binds a sealed plan to its row: a plan file copied onto
// another PR, layer or head does not open.
func planContext(p *Plan) []byte {
	return []byte(fmt.Sprintf("plan\x00%s\x00%d\x00%s\x00%s", p.Repo, p.PR, p.Layer, p.HeadSHA))
}

func (s *Store) openPlan(p *Plan, sealed []byte) error {
	if s.keys == nil {
		return errors.New("open a saved plan: the store has no encryption keys")
	}
	plain, err := s.keys.Open(sealed, planContext(p))
	var unknown *seal.UnknownKeyError
	switch {
	case err == nil:
		p.PlanFile = plain
		return nil
	case errors.Is(err, seal.ErrNotSealed):
		return ErrPlanUnsealed
	case errors.As(err, &unknown):
		return fmt.Errorf("the saved plan of %s was encrypted with key %s, which this server does not have: "+
			"run /plan again, or add that key to %s (every replica needs the same keys)", p.Layer, unknown.ID, seal.OldKeysEnv)
	default:
		return fmt.Errorf("the saved plan of %s %w: run /plan again", p.Layer, err)
	}
}

// SavePlan stores a plan, sealed, replacing an earlier plan of the same
// layer at the same head (a re-plan).
func (s *Store) SavePlan(ctx context.Context, p Plan) error {
	if s.keys == nil {
		return fmt.Errorf("save plan of %s#%d %s: the store has no encryption keys", p.Repo, p.PR, p.Layer)
	}
	changes := 0
	if p.HasChanges {
		changes = 1
	}
	sealed := s.keys.Seal(p.PlanFile, planContext(&p))
	_, err := s.exec(ctx, `INSERT INTO plans (`+planColumns+`, plan) VALUES (?, ?, ?, ?, ?, ?, ?, 0, ?, ?)
		ON CONFLICT (repo, pr, layer, head_sha) DO UPDATE SET plan = excluded.plan, summary = excluded.summary,
		has_changes = excluded.has_changes, created_at = excluded.created_at, applied_at = 0,
		base_generation = excluded.base_generation`,
		p.Repo, p.PR, p.Layer, p.HeadSHA, p.Summary, changes, now(), p.BaseGeneration, sealed)
	if err != nil {
		return fmt.Errorf("save plan of %s#%d %s: %w", p.Repo, p.PR, p.Layer, err)
	}
	return nil
}

// PlanAt returns the plan of a layer at a head with its plan file opened,
// ErrNotFound, ErrPlanUnsealed, or an error saying why the plan file does
// not open.
func (s *Store) PlanAt(ctx context.Context, repo string, pr int, layer, headSHA string) (*Plan, error) {
	var sealed []byte
	p, err := scanPlan(s.queryRow(ctx, `SELECT `+planColumns+`, plan FROM plans WHERE repo = ? AND pr = ? AND layer = ? AND head_sha = ?`,
		repo, pr, layer, headSHA), &sealed)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	if err := s.openPlan(p, sealed); err != nil {
		return nil, err
	}
	return p, nil
}

// PlansOfPR lists a PR's plans at every head, newest first, without their
// plan files.
func (s *Store) PlansOfPR(ctx context.Context, repo string, pr int) ([]*Plan, error) {
	return s.queryPlans(ctx, `SELECT `+planColumns+` FROM plans WHERE repo = ? AND pr = ? ORDER BY created_at DESC, layer`, repo, pr)
}

// queryPlans reads the plans query selects (its columns planColumns).
func (s *Store) queryPlans(ctx context.Context, query string, args ...any) ([]*Plan, error) {
	return queryAll(ctx, s, func(r rowScanner) (*Plan, error) { return scanPlan(r) }, query, args...)
}

// MarkApplied records that a plan was applied, and moves the layer's
// generation on in the same transaction (the plans made before are stale).
// It reports false when the plan was already applied (or is gone): an
// apply runs once.
func (s *Store) MarkApplied(ctx context.Context, repo string, pr int, layer, headSHA string) (bool, error) {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return false, err
	}
	defer tx.Rollback()
	res, err := tx.ExecContext(ctx, s.rebind(`UPDATE plans SET applied_at = ? WHERE repo = ? AND pr = ? AND layer = ? AND head_sha = ? AND applied_at = 0`),
		now(), repo, pr, layer, headSHA)
	if err != nil {
		return false, err
	}
	if n, _ := res.RowsAffected(); n != 1 {
		return false, nil
	}
	if err := s.moveGeneration(ctx, tx, repo, layer, pr, headSHA); err != nil {
		return false, err
	}
	return true, tx.Commit()
}

// DeletePlansOfPR discards every plan of a PR (it was closed or merged).
func (s *Store) DeletePlansOfPR(ctx context.Context, repo string, pr int) error {
	_, err := s.exec(ctx, `DELETE FROM plans WHERE repo = ? AND pr = ?`, repo, pr)
	return err
}

// PlanBatch is the plans started by one command or autoplan; their reports
// make one comment once every layer is done.
type PlanBatch struct {
	ID    string
	Repo  string
	PR    int
	Total int
}

// CreateBatch records a batch. It reports false when the id exists: the job
// that creates it ran before, and BatchLayer says how far it got.
func (s *Store) CreateBatch(ctx context.Context, b PlanBatch) (bool, error) {
	res, err := s.exec(ctx, `INSERT INTO plan_batches (id, repo, pr, total, commented, created_at) VALUES (?, ?, ?, ?, 0, ?)
		ON CONFLICT (id) DO NOTHING`, b.ID, b.Repo, b.PR, b.Total, now())
	if err != nil {
		return false, fmt.Errorf("create plan batch %s: %w", b.ID, err)
	}
	n, _ := res.RowsAffected()
	return n == 1, nil
}

// BatchLayer is how far a batch got with starting one layer.
type BatchLayer struct {
	// CheckRunID is the layer's queued plan check, once created.
	CheckRunID int64
	// Started: the plan job is enqueued, or the layer was reported blocked.
	Started bool
}

// BatchLayer returns how far the batch got with the layer (zero when it
// has not begun it).
func (s *Store) BatchLayer(ctx context.Context, batchID, layer string) (BatchLayer, error) {
	var b BatchLayer
	var started int64
	err := s.queryRow(ctx, `SELECT check_run_id, started FROM plan_batch_layers WHERE batch_id = ? AND layer = ?`,
		batchID, layer).Scan(&b.CheckRunID, &started)
	if errors.Is(err, sql.ErrNoRows) {
		return BatchLayer{}, nil
	}
	b.Started = started != 0
	return b, err
}

// SetBatchLayer records how far the batch got with the layer.
func (s *Store) SetBatchLayer(ctx context.Context, batchID, layer string, b BatchLayer) error {
	started := 0
	if b.Started {
		started = 1
	}
	_, err := s.exec(ctx, `INSERT INTO plan_batch_layers (batch_id, layer, check_run_id, started) VALUES (?, ?, ?, ?)
		ON CONFLICT (batch_id, layer) DO UPDATE SET check_run_id = excluded.check_run_id, started = excluded.started`,
		batchID, layer, b.CheckRunID, started)
	if err != nil {
		return fmt.Errorf("plan batch %s, layer %s: %w", batchID, layer, err)
	}
	return nil
}

// BatchItem is one layer's report in a batch (encoded by the caller).
type BatchItem struct {
	Layer    string
	Position int
	Report   string
}

// FinishBatchItem stores a layer's report. When it completes the batch and
// nobody commented yet, it claims the comment and returns every item, in
// position order; otherwise it returns nil.
func (s *Store) FinishBatchItem(ctx context.Context, batchID string, item BatchItem) ([]BatchItem, error) {
	_, err := s.exec(ctx, `INSERT INTO plan_batch_items (batch_id, layer, position, report) VALUES (?, ?, ?, ?)
		ON CONFLICT (batch_id, layer) DO UPDATE SET report = excluded.report`, batchID, item.Layer, item.Position, item.Report)
	if err != nil {
		return nil, fmt.Errorf("finish %s in plan batch %s: %w", item.Layer, batchID, err)
	}
	var total, done int
	if err := s.queryRow(ctx, `SELECT total FROM plan_batches WHERE id = ?`, batchID).Scan(&total); err != nil {
		return nil, fmt.Errorf("plan batch %s: %w", batchID, err)
	}
	if err := s.queryRow(ctx, `SELECT count(*) FROM plan_batch_items WHERE batch_id = ?`, batchID).Scan(&done); err != nil {
		return nil, err
	}
	if done < total {
		return nil, nil
	}
	res, err := s.exec(ctx, `UPDATE plan_batches SET commented = 1 WHERE id = ? AND commented = 0`, batchID)
	if err != nil {
		return nil, err
	}
	if n, _ := res.RowsAffected(); n != 1 {
		return nil, nil
	}
	return queryAll(ctx, s, func(r rowScanner) (BatchItem, error) {
		var it BatchItem
		err := r.Scan(&it.Layer, &it.Position, &it.Report)
		return it, err
	}, `SELECT layer, position, report FROM plan_batch_items WHERE batch_id = ? ORDER BY position, layer`, batchID)
}
