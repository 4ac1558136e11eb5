package store

import (
	"context"
	"strings"
)

// What the web UI lists of one repository. Its pages show many runs at
// once, so these leave out the logs; the run page reads its one log with
// Run.

const runColumnsNoLog = `id, job_id, attempt, kind, repo, pr, target, head_sha, status, conclusion,
	summary, '' AS log, check_run_id, started_at, heartbeat_at, finished_at`

// LatestRuns returns the newest run of each kind and target of a
// repository, for the given kinds, without logs. An apply of several
// layers is one run whose target lists them, comma-separated.
func (s *Store) LatestRuns(ctx context.Context, repo string, kinds ...string) ([]*Run, error) {
	if len(kinds) == 0 {
		return nil, nil
	}
	args := []any{repo}
	for _, k := range kinds {
		args = append(args, k)
	}
	rows, err := s.query(ctx, `SELECT `+runColumnsNoLog+` FROM runs WHERE id IN (
		SELECT max(id) FROM runs WHERE repo = ? AND kind IN (`+placeholders(len(kinds))+`) GROUP BY kind, target)
		ORDER BY id DESC`, args...)
	if err != nil {
		return nil, err
	}
	return collectRuns(rows)
}

// TargetRuns says which runs of a repository RunsOfTarget lists.
type TargetRuns struct {
	Repo, Target string
	// Kinds are the kinds whose runs have Target as their target.
	Kinds []string
	// ListKinds are the kinds whose runs may name several targets,
	// comma-separated (an apply of several layers): one counts when Target
	// is among them.
	ListKinds []string
	Limit     int
}

// RunsOfTarget returns a target's newest runs, newest first, at most
// f.Limit, without logs.
func (s *Store) RunsOfTarget(ctx context.Context, f TargetRuns) ([]*Run, error) {
	var or []string
	args := []any{f.Repo}
	if len(f.Kinds) > 0 {
		or = append(or, `(kind IN (`+placeholders(len(f.Kinds))+`) AND target = ?)`)
		for _, k := range f.Kinds {
			args = append(args, k)
		}
		args = append(args, f.Target)
	}
	if len(f.ListKinds) > 0 {
		or = append(or, `(kind IN (`+placeholders(len(f.ListKinds))+`) AND ',' || target || ',' LIKE ? ESCAPE '\')`)
		for _, k := range f.ListKinds {
			args = append(args, k)
		}
		args = append(args, "%,"+likeEscaper.Replace(f.Target)+",%")
	}
	if len(or) == 0 {
		return nil, nil
	}
	rows, err := s.query(ctx, `SELECT `+runColumnsNoLog+` FROM runs WHERE repo = ? AND (`+strings.Join(or, " OR ")+`)
		ORDER BY id DESC LIMIT ?`, append(args, f.Limit)...)
	if err != nil {
		return nil, err
	}
	return collectRuns(rows)
}

func placeholders(n int) string { return strings.TrimSuffix(strings.Repeat("?, ", n), ", ") }

var likeEscaper = strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)

// LocksOfRepo lists a repository's locks, by layer.
func (s *Store) LocksOfRepo(ctx context.Context, repo string) ([]*Lock, error) {
	return s.locks(ctx, `SELECT `+lockColumns+` FROM locks WHERE repo = ? ORDER BY layer`, repo)
}

// TakeoversOfRepo lists a repository's takeovers, by sync.
func (s *Store) TakeoversOfRepo(ctx context.Context, repo string) ([]*Takeover, error) {
	rows, err := s.query(ctx, `SELECT `+takeoverColumns+` FROM takeovers WHERE repo = ? ORDER BY sync`, repo)
	if err != nil {
		return nil, err
	}
	return collectTakeovers(rows)
}
