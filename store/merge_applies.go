package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// auto_apply: on_merge (docs/governance.md): the reviewed plans' changes,
// kept past a PR's close, and the post-merge applies in merge order.

// planChangesContext binds sealed changes to their plan's row.
func planChangesContext(repo string, pr int, layer, headSHA string) []byte {
	return []byte(fmt.Sprintf("plan-changes\x00%s\x00%d\x00%s\x00%s", repo, pr, layer, headSHA))
}

// SavePlanChanges keeps the resource changes (encoded by the caller) of a
// PR's plan of a layer at a head, sealed: they hold planned values.
func (s *Store) SavePlanChanges(ctx context.Context, repo string, pr int, layer, headSHA string, changes []byte) error {
	if s.keys == nil {
		return fmt.Errorf("save the changes of %s#%d %s: the store has no encryption keys", repo, pr, layer)
	}
	sealed := s.keys.Seal(changes, planChangesContext(repo, pr, layer, headSHA))
	_, err := s.exec(ctx, `INSERT INTO plan_changes (repo, pr, layer, head_sha, changes, created_at) VALUES (?, ?, ?, ?, ?, ?)
		ON CONFLICT (repo, pr, layer, head_sha) DO UPDATE SET changes = excluded.changes, created_at = excluded.created_at`,
		repo, pr, layer, headSHA, sealed, now())
	if err != nil {
		return fmt.Errorf("save the changes of %s#%d %s: %w", repo, pr, layer, err)
	}
	return nil
}

// PlanChanges returns the changes SavePlanChanges kept, or ErrNotFound.
func (s *Store) PlanChanges(ctx context.Context, repo string, pr int, layer, headSHA string) ([]byte, error) {
	var sealed []byte
	err := s.queryRow(ctx, `SELECT changes FROM plan_changes WHERE repo = ? AND pr = ? AND layer = ? AND head_sha = ?`,
		repo, pr, layer, headSHA).Scan(&sealed)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	if s.keys == nil {
		return nil, errors.New("open a plan's changes: the store has no encryption keys")
	}
	plain, err := s.keys.Open(sealed, planChangesContext(repo, pr, layer, headSHA))
	if err != nil {
		return nil, fmt.Errorf("open the changes of %s#%d %s: %w", repo, pr, layer, err)
	}
	return plain, nil
}

// DeletePlanChanges forgets the changes of a PR's plans (its post-merge
// applies ended, or it closed unmerged).
func (s *Store) DeletePlanChanges(ctx context.Context, repo string, pr int) error {
	_, err := s.exec(ctx, `DELETE FROM plan_changes WHERE repo = ? AND pr = ?`, repo, pr)
	return err
}

// MergeApply is the post-merge apply of one layer of a merged PR. State
// is the caller's named state (layers/merge_state.go).
type MergeApply struct {
	ID             int64
	Repo           string
	PR             int
	Layer          string
	HeadSHA        string // the PR's head when it merged: its reviewed plan's
	MergeSHA       string
	MergedAt       time.Time
	State          string
	Detail         string
	CheckRunID     int64
	InstallationID int64
	UpdatedAt      time.Time
}

const mergeApplyColumns = `id, repo, pr, layer, head_sha, merge_sha, merged_at, state, detail, check_run_id, installation_id, updated_at`

func scanMergeApply(row rowScanner) (*MergeApply, error) {
	var m MergeApply
	var merged, updated int64
	if err := row.Scan(&m.ID, &m.Repo, &m.PR, &m.Layer, &m.HeadSHA, &m.MergeSHA, &merged, &m.State, &m.Detail,
		&m.CheckRunID, &m.InstallationID, &updated); err != nil {
		return nil, err
	}
	m.MergedAt, m.UpdatedAt = fromMillis(merged), fromMillis(updated)
	return &m, nil
}

// AddMergeApply records a layer's post-merge apply, unless the PR's layer
// has one (a redelivered close): it returns the row as stored.
func (s *Store) AddMergeApply(ctx context.Context, m MergeApply) (*MergeApply, error) {
	_, err := s.exec(ctx, `INSERT INTO merge_applies (repo, pr, layer, head_sha, merge_sha, merged_at, state, detail, check_run_id, installation_id, updated_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (repo, pr, layer) DO NOTHING`,
		m.Repo, m.PR, m.Layer, m.HeadSHA, m.MergeSHA, m.MergedAt.UnixMilli(), m.State, m.Detail, m.CheckRunID, m.InstallationID, now())
	if err != nil {
		return nil, fmt.Errorf("record the post-merge apply of %s#%d %s: %w", m.Repo, m.PR, m.Layer, err)
	}
	return scanMergeApply(s.queryRow(ctx, `SELECT `+mergeApplyColumns+` FROM merge_applies WHERE repo = ? AND pr = ? AND layer = ?`, m.Repo, m.PR, m.Layer))
}

// MergeAppliesOfPR lists a PR's post-merge applies.
func (s *Store) MergeAppliesOfPR(ctx context.Context, repo string, pr int) ([]*MergeApply, error) {
	return queryAll(ctx, s, scanMergeApply, `SELECT `+mergeApplyColumns+` FROM merge_applies WHERE repo = ? AND pr = ? ORDER BY id`, repo, pr)
}

// MergeAppliesIn lists the post-merge applies of a layer whose state is one
// of states (those not ended: what a later merge's apply may wait for), by
// id. Which of them merged before which is Git's to say (layers'
// mergeTurn), not merged_at's: GitHub gives it to the second, and a merge
// queue merges a whole group in the same second.
func (s *Store) MergeAppliesIn(ctx context.Context, repo, layer string, states ...string) ([]*MergeApply, error) {
	if len(states) == 0 {
		return nil, nil
	}
	q := `SELECT ` + mergeApplyColumns + ` FROM merge_applies WHERE repo = ? AND layer = ? AND state IN (?`
	args := []any{repo, layer, states[0]}
	for _, st := range states[1:] {
		q += `, ?`
		args = append(args, st)
	}
	return queryAll(ctx, s, scanMergeApply, q+`) ORDER BY id`, args...)
}

// SetMergeApply moves a post-merge apply to state, with what it found.
func (s *Store) SetMergeApply(ctx context.Context, id int64, state, detail string, checkRunID int64) error {
	_, err := s.exec(ctx, `UPDATE merge_applies SET state = ?, detail = ?, check_run_id = ?, updated_at = ? WHERE id = ?`,
		state, detail, checkRunID, now(), id)
	return err
}

// LastMergeApplyOf returns the latest post-merge apply of a layer, or
// ErrNotFound.
func (s *Store) LastMergeApplyOf(ctx context.Context, repo, layer string) (*MergeApply, error) {
	m, err := scanMergeApply(s.queryRow(ctx, `SELECT `+mergeApplyColumns+` FROM merge_applies WHERE repo = ? AND layer = ?
		ORDER BY merged_at DESC, id DESC LIMIT 1`, repo, layer))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNotFound
	}
	return m, err
}

// MergeAppliesOfLayer lists the layer's latest post-merge applies, the
// last merged first, at most limit: the web UI's layer page.
func (s *Store) MergeAppliesOfLayer(ctx context.Context, repo, layer string, limit int) ([]*MergeApply, error) {
	return queryAll(ctx, s, scanMergeApply, `SELECT `+mergeApplyColumns+` FROM merge_applies WHERE repo = ? AND layer = ?
		ORDER BY merged_at DESC, id DESC LIMIT ?`, repo, layer, limit)
}
