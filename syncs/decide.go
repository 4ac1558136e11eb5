package syncs

import (
	"context"
	"errors"
	"fmt"
	"path"
	"strings"
	"time"

	"strata.dev/strata/command"
	"strata.dev/strata/config"
	"strata.dev/strata/engine/hydrate"
	"strata.dev/strata/engine/markdown"
	"strata.dev/strata/gitcommit"
	"strata.dev/strata/jobs"
	"strata.dev/strata/pull"
	"strata.dev/strata/report"
	"strata.dev/strata/store"
	"strata.dev/strata/words"
)

// The decisions of the syncs capability, as functions of facts the caller
// read (the PR through pull.Context, store rows, config). The commands and
// event reactions do the I/O around them; table tests call them directly.
// Who may run /takeover and /release is not decided here: the runtime's
// permission table does it before the command runs.

// takeoverStart is what a /takeover does: take Sync over for Duration, or
// refuse with Refuse, the reason the user reads.
type takeoverStart struct {
	Sync     config.Sync
	Duration time.Duration
	// Capped tells the user that the duration asked for was cut.
	Capped string
	Refuse string
}

// decideTakeover decides whether a /takeover may start, of which sync and
// for how long: an open PR whose head lives in this repository (a fork's
// head is never hydrated), naming one of the repo's syncs (or the only one),
// for the duration asked (the sync's default when none) up to the sync's
// maximum. Whether the sync is free is the store's claim: see takenBy.
func decideTakeover(pr pull.Context, syncs []config.Sync, cmd command.Takeover) takeoverStart {
	if !pr.Open() {
		return takeoverStart{Refuse: "this pull request is closed."}
	}
	if pr.Fork() {
		return takeoverStart{Refuse: "this pull request comes from a fork; a fork's head is never hydrated into a destination."}
	}
	s, err := pickSync(syncs, cmd.Sync)
	if err != nil {
		return takeoverStart{Refuse: err.Error()}
	}
	if s.Proposed {
		return takeoverStart{Refuse: fmt.Sprintf("%s is not on the default branch. Where a sync writes (`dest`) and for how "+
			"long it may be taken over are the default branch's to say, so a sync that only a pull request defines can be "+
			"previewed but not taken over. Merge its definition in %s first.", markdown.Quote(s.Name), markdown.Quote(definedIn(s)))}
	}
	if s.Dest.HydrateTo != "" {
		return takeoverStart{Refuse: fmt.Sprintf("%s is promoted by pull request: it hydrates into %s, and %s changes only when "+
			"its promotion pull request merges (`dest.hydrate_to`). A takeover would write around that review, so it is refused; "+
			"a pull request's preview shows what it would hydrate.", markdown.Quote(s.Name), markdown.Quote(s.Dest.HydrateTo), markdown.Quote(s.Dest.Branch))}
	}
	start := takeoverStart{Sync: s, Duration: cmd.Duration}
	if start.Duration == 0 {
		start.Duration = s.Takeover.Default
	}
	if start.Duration > s.Takeover.Max {
		start.Duration, start.Capped = s.Takeover.Max, fmt.Sprintf(" (capped at the sync's maximum, %s)", words.Duration(s.Takeover.Max))
	}
	return start
}

// pickSync returns the sync named, or the repo's only sync when name is "".
func pickSync(syncs []config.Sync, name string) (config.Sync, error) {
	var names []string
	for _, s := range syncs {
		if s.Name == name {
			return s, nil
		}
		names = append(names, s.Name)
	}
	switch {
	case len(syncs) == 0:
		return config.Sync{}, fmt.Errorf("this repository has no sync (`syncs` in %s)", markdown.Quote(config.RepoFile))
	case name == "" && len(syncs) == 1:
		return syncs[0], nil
	case name == "":
		return config.Sync{}, fmt.Errorf("this repository has several syncs; name one: %s", report.Names(names))
	}
	return config.Sync{}, fmt.Errorf("no sync %s in this repository; its syncs are: %s", markdown.Quote(name), report.Names(names))
}

// refusal is a /takeover refused after the claim: the failed takeover
// check's title and summary, and the reason the reply gives.
type refusal struct {
	Title, Summary, Reason string
}

// takenBy is the refusal of a /takeover of a sync that another PR holds
// (held, as the store's claim returned it; holderURL links its PR).
func takenBy(sync string, held *store.Takeover, holderURL string) refusal {
	return refusal{
		Title: fmt.Sprintf("Taken over by #%d", held.PR),
		Summary: fmt.Sprintf("%s is taken over by [#%d](%s) (@%s) until %s. Nothing was hydrated.",
			markdown.Quote(sync), held.PR, holderURL, held.Holder, when(held.ExpiresAt)),
		Reason: fmt.Sprintf("%s is taken over by #%d (@%s) until %s. Try again once it is released.",
			markdown.Quote(sync), held.PR, held.Holder, when(held.ExpiresAt)),
	}
}

// releaseDecision is what a /release does: end Release, or Reply to the
// user; neither when the takeover was given back just now (a retry).
type releaseDecision struct {
	Release *store.Takeover
	Reply   string
}

// decideRelease decides what a /release [SYNC] releases, from the
// takeovers the PR holds and those whose endings this command finished just
// now (a retry of it, or a /release after a failed one): the sync named, or
// the PR's only one.
func decideRelease(name string, held, done []*store.Takeover) releaseDecision {
	for _, t := range held {
		if t.Sync == name || (name == "" && len(held) == 1) {
			return releaseDecision{Release: t}
		}
	}
	switch {
	case len(done) > 0 && (name != "" || len(held) == 0):
		return releaseDecision{} // given back just now
	case len(held) == 0:
		return releaseDecision{Reply: "this pull request holds no takeover to release."}
	case name == "":
		return releaseDecision{Reply: "this pull request holds several syncs; name one: `/release SYNC`."}
	}
	return releaseDecision{Reply: fmt.Sprintf("this pull request does not hold %s.", markdown.Quote(name))}
}

// pushChanges lists the files a push changed: from the payload, else from
// the compare API. known is false when they cannot be told (a new branch, a
// force push, commits GitHub cannot relate), and every sync is hydrated.
func pushChanges(ctx context.Context, repo pull.Repository, ev jobs.Push) (files []string, known bool, err error) {
	if len(ev.Changed) > 0 {
		return ev.Changed, true, nil
	}
	if ev.Before == "" || ev.Before == zeroSHA {
		return nil, false, nil
	}
	cmp, err := repo.CompareFiles(ctx, ev.Before, ev.After)
	if errors.Is(err, pull.ErrNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	if cmp.Status != "ahead" {
		return nil, false, nil // a force push: what it replaced is not listed
	}
	return cmp.Files, true, nil
}

// upToDate tells whether a push leaves a sync's destination as its last
// hydration left it: that hydration succeeded, with the same sync config,
// and the push changed none of its inputs (known: the push's files could be
// told).
func upToDate(last *store.SyncHydration, spec jobs.SyncSpec, changed []string, known bool) bool {
	return last != nil && known && last.FailedCommit == "" && last.Spec == specJSON(spec) && !hydrate.InputsChanged(last.Inputs, changed)
}

// feedsItself refuses a sync that writes into its own source on the default
// branch: each hydration would be a push that changes its inputs.
func feedsItself(ev jobs.Push, spec jobs.SyncSpec) string {
	if spec.DestRepo != ev.FullName || spec.DestBranch != ev.DefaultBranch {
		return ""
	}
	dest := strings.Trim(path.Clean("/"+spec.DestPath), "/")
	src := strings.Trim(path.Clean("/"+spec.Source), "/")
	if dest == "" || src == "" || dest == src || strings.HasPrefix(src, dest+"/") || strings.HasPrefix(dest, src+"/") {
		return fmt.Sprintf("Nothing was hydrated: %s writes to %s on %s, which overlaps its source %s; "+
			"each hydration would change its own inputs. Choose another dest branch or path.", markdown.Quote(spec.Name), markdown.Quote(spec.DestPath), markdown.Quote(spec.DestBranch), markdown.Quote(spec.Source))
	}
	return ""
}

// previewTouched tells whether a PR's files can change a sync's output: one
// is an input of its last hydration, lies under its source, or is the config
// (.strata.yaml or the Sync file it was discovered in).
func previewTouched(s config.Sync, last *store.SyncHydration, files []string) bool {
	if last != nil && len(last.Inputs) > 0 && hydrate.InputsChanged(last.Inputs, files) {
		return true
	}
	src := strings.Trim(path.Clean("/"+s.Source), "/")
	for _, f := range files {
		if f == config.RepoFile || f == s.File || src == "" || strings.HasPrefix(f, src+"/") {
			return true
		}
	}
	return false
}

// sameOutput decides whether a hydration of repo at commit, whose files
// differ from those the destination holds (held: blob SHAs by
// repo-relative path, under destPath), differs only in the source commit it
// names, the strata.dev/source-commit annotations and .strata-sync.yaml's
// sourceCommit: the destination holds a hydration of repo from another
// commit, not a takeover's, and the output named after that commit
// (filesAt) is exactly what it holds. It returns that commit: nothing is
// committed, since an empty-looking commit that only renames the source
// would deploy nothing new. "" means the output changed.
func sameOutput(cur *hydrate.SyncState, held map[string][]byte, destPath, repo, commit string, filesAt func(string) (map[string][]byte, error)) (string, error) {
	if cur == nil || cur.Takeover != nil || cur.SourceRepo != repo || cur.SourceCommit == "" || cur.SourceCommit == commit {
		return "", nil
	}
	files, err := filesAt(cur.SourceCommit)
	if err != nil {
		return "", err
	}
	blobs := make(map[string][]byte, len(files))
	for name, content := range files {
		blobs[name] = []byte(gitcommit.BlobSHA(content))
	}
	if _, changed := hydrate.Plan(held, destPath, blobs); changed {
		return "", nil
	}
	return cur.SourceCommit, nil
}
