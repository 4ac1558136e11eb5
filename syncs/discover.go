package syncs

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"strata.dev/strata/checks"
	"strata.dev/strata/config"
	"strata.dev/strata/engine/markdown"
	"strata.dev/strata/jobs"
	"strata.dev/strata/pull"
	"strata.dev/strata/report"
	"strata.dev/strata/store"
	"strata.dev/strata/worker"
)

// Sync files that discovery could not use (worker.RepoConfig's
// SyncFileProblems) fail a `strata/hydrate: SYNC` check of their own,
// named by the sync the file means (its metadata.name) or, when the file
// cannot be read that far, by its path. The other syncs go on.

// syncFileChecks groups problems by the check they fail, in file order.
func syncFileChecks(problems []config.SyncFileProblem) (names []string, lines map[string][]string) {
	lines = map[string][]string{}
	for _, p := range problems {
		name := p.Sync
		if name == "" {
			name = p.File
		}
		if _, ok := lines[name]; !ok {
			names = append(names, name)
		}
		lines[name] = append(lines[name], "- "+markdown.Quote(p.Error()))
	}
	return names, lines
}

// reportSyncFilesOnPush fails, once per pushed commit, a check for each
// Sync file discovery could not use.
func reportSyncFilesOnPush(ctx context.Context, rep *report.Reporter, ev jobs.Push, problems []config.SyncFileProblem) error {
	names, lines := syncFileChecks(problems)
	for _, name := range names {
		if err := failOnce(ctx, rep, ev.After, name, "Invalid Sync file", syncFileSummary(ev.After, lines[name])); err != nil {
			return err
		}
	}
	return nil
}

// reportSyncFilesOnPR fails a check on the PR's head for each Sync file
// the PR changes that discovery could not use: a file broken on the base
// branch already failed on its push, and is not this PR's to fix.
func reportSyncFilesOnPR(ctx context.Context, rep *report.Reporter, pr pull.Context, ev jobs.PullRequest, problems []config.SyncFileProblem) error {
	files, err := pr.ChangedFiles(ctx)
	if err != nil {
		return err
	}
	var mine []config.SyncFileProblem
	for _, p := range problems {
		if slices.Contains(files, p.File) {
			mine = append(mine, p)
		}
	}
	names, lines := syncFileChecks(mine)
	for _, name := range names {
		check := checks.Hydrate(name)
		if cur, err := rep.FindCheck(ctx, ev.HeadSHA, check); err != nil || cur != nil {
			if err != nil {
				return err
			}
			continue // a retried event
		}
		if _, err := rep.CreateCheck(ctx, report.Check{Name: check, HeadSHA: ev.HeadSHA, ExternalID: checks.ExternalID(ev.PR),
			Conclusion: "failure", Title: "Invalid Sync file", Summary: syncFileSummary(ev.HeadSHA, lines[name])}); err != nil {
			return err
		}
	}
	return nil
}

func syncFileSummary(sha string, lines []string) string {
	return fmt.Sprintf("Strata cannot use this Sync file at %s, so nothing is hydrated from it; the other syncs go on.\n\n%s\n",
		report.Short(sha), strings.Join(lines, "\n"))
}

// previewBase is the commit a preview compares the PR's head with: none for
// a sync only the PR defines (a new Sync file, a new entry of .strata.yaml),
// whose every file is new, though its source may build the same at the base.
func previewBase(s config.Sync, base string) string {
	if s.Proposed {
		return ""
	}
	return base
}

// definedIn is the file that defines a sync: its Sync file, or .strata.yaml.
func definedIn(s config.Sync) string {
	if s.File != "" {
		return s.File
	}
	return config.RepoFile
}

// syncDiscovery is what the store keeps of a push's syncs for the web UI's
// repository page, which reads the store only: each sync with the file
// that defines it, and the Sync files discovery left out or could not use.
func syncDiscovery(ev jobs.Push, cfg *worker.RepoConfig) store.SyncDiscovery {
	out := store.SyncDiscovery{Repo: ev.FullName, Commit: ev.After, Skipped: cfg.SkippedSyncs}
	for _, s := range cfg.Syncs {
		out.Syncs = append(out.Syncs, store.DefinedSync{Name: s.Name, File: s.File})
	}
	for _, p := range cfg.SyncFileProblems {
		out.Problems = append(out.Problems, store.SyncFileProblem{Sync: p.Sync, File: p.File, Line: p.Line, Message: p.Msg})
	}
	return out
}
