package syncs

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"path"
	"sort"

	"github.com/google/go-github/v60/github"

	"strata.dev/strata/engine/hydrate"
	"strata.dev/strata/engine/markdown"
	"strata.dev/strata/gitcommit"
	"strata.dev/strata/jobs"
	"strata.dev/strata/pull"
	"strata.dev/strata/store"
	"strata.dev/strata/worker"
)

// promote opens or updates the promotion pull request of a sync that
// hydrates into a staging branch (dest.hydrate_to): from the staging branch
// into dest.branch, titled with the source commits it carries and listing
// them and the files it changes. It reads the facts, asks decidePromotion,
// and does what that says; a retried job finds the pull request it opened.
func promote(ctx context.Context, d *worker.Deps, gh *github.Client, a jobs.SyncHydrate) (promotion, error) {
	dest := destOf(a.Sync)
	staging := a.Sync.HydrateTo
	commits, files, err := compareStaging(ctx, gh, dest.Owner, dest.Repo, dest.Branch, staging)
	if err != nil {
		return promotion{}, err
	}
	promoted, err := promotedSourceCommit(ctx, gh, dest.Owner, dest.Repo, dest.Branch, dest.Path)
	if err != nil {
		return promotion{}, err
	}
	facts := promotionFacts{Sync: a.Target, SourceRepo: a.FullName, Staging: staging, Branch: dest.Branch, Path: dest.Path, Files: files}
	for i, sha := range carriedSources(commits, a.Target, promoted) {
		s := promotedSource{SHA: sha, URL: d.CommitURL(a.FullName, sha)}
		if i < listedSources {
			c, err := readSourceCommit(ctx, gh, a.Owner, a.Name, sha)
			if err != nil {
				return promotion{}, err
			}
			s.Subject, s.Author = subjectOf(c.Message), oneLine(c.Author, maxSubject)
		}
		facts.Sources = append(facts.Sources, s)
	}
	if facts.Open, err = openPromotionPR(ctx, gh, dest.Owner, dest.Repo, dest.Branch, staging); err != nil {
		return promotion{}, err
	}
	p := decidePromotion(facts)
	switch p.Outcome {
	case promoteOpen:
		pr, _, err := gh.PullRequests.Create(ctx, dest.Owner, dest.Repo, &github.NewPullRequest{
			Title: github.String(p.Title), Head: github.String(dest.Owner + ":" + staging), Base: github.String(dest.Branch),
			Body: github.String(p.Body), MaintainerCanModify: github.Bool(false)})
		if err != nil {
			return promotion{}, fmt.Errorf("open the promotion pull request from %s into %s of %s/%s: %w", staging, dest.Branch, dest.Owner, dest.Repo, err)
		}
		p.Number = pr.GetNumber()
	case promoteUpdate:
		if _, _, err := gh.PullRequests.Edit(ctx, dest.Owner, dest.Repo, p.Number,
			&github.PullRequest{Title: github.String(p.Title), Body: github.String(p.Body)}); err != nil {
			return promotion{}, fmt.Errorf("update the promotion pull request #%d of %s/%s: %w", p.Number, dest.Owner, dest.Repo, err)
		}
	}
	return p, nil
}

// compareStaging lists the commits staging has that branch lacks, oldest
// first (at most 300, GitHub's most for one comparison in pages of 100),
// and the files their merge changes.
func compareStaging(ctx context.Context, gh *github.Client, owner, repo, branch, staging string) ([]stagingCommit, []promotedFile, error) {
	var commits []stagingCommit
	var files []promotedFile
	seen := map[string]bool{}
	opts := &github.ListOptions{PerPage: 100}
	for range 3 {
		cmp, resp, err := gh.Repositories.CompareCommits(ctx, owner, repo, branch, staging, opts)
		if err != nil {
			return nil, nil, fmt.Errorf("compare %s...%s in %s/%s: %w", branch, staging, owner, repo, err)
		}
		for _, c := range cmp.Commits {
			commits = append(commits, stagingCommit{SHA: c.GetSHA(), Message: c.GetCommit().GetMessage()})
		}
		// GitHub repeats the files on every page of commits.
		for _, f := range cmp.Files {
			if !seen[f.GetFilename()] {
				seen[f.GetFilename()] = true
				files = append(files, promotedFile{Path: f.GetFilename(), Status: f.GetStatus()})
			}
		}
		if resp.NextPage == 0 {
			break
		}
		opts.Page = resp.NextPage
	}
	sort.SliceStable(files, func(i, j int) bool { return files[i].Path < files[j].Path })
	return commits, files, nil
}

// promotedSourceCommit is the source commit whose hydration dest.branch
// holds (its .strata-sync.yaml), "" when none.
func promotedSourceCommit(ctx context.Context, gh *github.Client, owner, repo, branch, dir string) (string, error) {
	b, err := pull.NewRepo(gh, owner, repo).File(ctx, branch, path.Join(dir, hydrate.SyncStateFile))
	if errors.Is(err, pull.ErrNotFound) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	state, err := hydrate.ParseSyncState(b)
	if err != nil || state.Takeover != nil {
		return "", nil // not a state Strata wrote for this: nothing counts as promoted
	}
	return state.SourceCommit, nil
}

// openPromotionPR is the oldest open pull request from staging into branch,
// nil when none.
func openPromotionPR(ctx context.Context, gh *github.Client, owner, repo, branch, staging string) (*openPromotion, error) {
	prs, _, err := gh.PullRequests.List(ctx, owner, repo, &github.PullRequestListOptions{State: "open", Head: owner + ":" + staging,
		Base: branch, ListOptions: github.ListOptions{PerPage: 100}})
	if err != nil {
		return nil, fmt.Errorf("list the pull requests from %s into %s of %s/%s: %w", staging, branch, owner, repo, err)
	}
	var open *openPromotion
	for _, pr := range prs {
		if open == nil || pr.GetNumber() < open.Number {
			open = &openPromotion{Number: pr.GetNumber(), Title: pr.GetTitle(), Body: pr.GetBody()}
		}
	}
	return open, nil
}

// readSourceCommit reads a source commit's message and author through the
// Git Data API (no diff); a commit GitHub no longer has reads as empty.
func readSourceCommit(ctx context.Context, gh *github.Client, owner, repo, sha string) (sourceCommit, error) {
	c, resp, err := gh.Git.GetCommit(ctx, owner, repo, sha)
	if resp != nil && (resp.StatusCode == http.StatusNotFound || resp.StatusCode == http.StatusUnprocessableEntity) {
		return sourceCommit{}, nil
	}
	if err != nil {
		return sourceCommit{}, fmt.Errorf("read commit %s of %s/%s: %w", sha, owner, repo, err)
	}
	return sourceCommit{Message: c.GetMessage(), Author: c.GetAuthor().GetName()}, nil
}

// writtenDest is where a sync's hydrations are committed: its staging
// branch with dest.hydrate_to, else dest.branch.
func writtenDest(spec jobs.SyncSpec) gitcommit.Destination {
	dest := destOf(spec)
	if spec.HydrateTo != "" {
		dest.Branch = spec.HydrateTo
	}
	return dest
}

// hydrationTarget is where a hydration commits, with its message: a staging
// branch is started from dest.branch first (gitcommit.ErrNoBranch when that
// does not exist), and a dest.commit_message template is given the source
// commit's subject and author. A template that fails on this commit leaves
// Strata's own message, and says why in the run's log.
func hydrationTarget(ctx context.Context, d *worker.Deps, gh *github.Client, a jobs.SyncHydrate) (gitcommit.Destination, string, error) {
	dest := writtenDest(a.Sync)
	if a.Sync.HydrateTo != "" {
		if err := (gitcommit.Writer{GitHub: gh}).StartBranch(ctx, dest, a.Sync.DestBranch); err != nil {
			return dest, "", err
		}
	}
	var src sourceCommit
	if a.Sync.CommitMessage != "" {
		var err error
		if src, err = readSourceCommit(ctx, gh, a.Owner, a.Name, a.HeadSHA); err != nil {
			return dest, "", err
		}
	}
	msg, err := commitMessage(a, src)
	if err != nil {
		d.AppendLog(ctx, fmt.Sprintf("[strata] %v: the commit has Strata's own message\n", err), nil)
	}
	return dest, msg, nil
}

// noPromotionBase says why a sync with a staging branch hydrated nothing:
// its dest.branch, which the staging branch starts from, does not exist.
func noPromotionBase(a jobs.SyncHydrate) string {
	return fmt.Sprintf("%s hydrates into %s and is promoted into %s by pull request, but %s has no branch %s to start %s from "+
		"or to promote into; nothing was committed. Create %s (an empty commit will do), then push again.",
		markdown.Quote(a.Target), markdown.Quote(a.Sync.HydrateTo), markdown.Quote(a.Sync.DestBranch), markdown.Quote(a.Sync.DestRepo),
		markdown.Quote(a.Sync.DestBranch), markdown.Quote(a.Sync.HydrateTo), markdown.Quote(a.Sync.DestBranch))
}

// keptDestCommit is the destination commit holding a hydration's output:
// the one it made, else (nothing changed) the one the last hydration
// recorded, so that the record moves to the new source commit without
// losing where its output is.
func keptDestCommit(ctx context.Context, d *worker.Deps, a jobs.SyncHydrate, made string) (string, error) {
	if made != "" {
		return made, nil
	}
	last, err := d.Store.SyncHydration(ctx, a.FullName, a.Target)
	if errors.Is(err, store.ErrNotFound) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	return last.DestCommit, nil
}

// promotionNote opens the hydrate check's summary with what became of the
// promotion pull request.
func promotionNote(d *worker.Deps, spec jobs.SyncSpec, p promotion) string {
	link := fmt.Sprintf("[#%d](%s)", p.Number, d.PRURL(spec.DestRepo, p.Number))
	from := fmt.Sprintf("from %s into %s", markdown.Quote(spec.HydrateTo), markdown.Quote(spec.DestBranch))
	switch p.Outcome {
	case promoteOpen:
		return fmt.Sprintf("Opened the promotion pull request %s %s: merge it to promote.\n\n", link, from)
	case promoteUpdate:
		return fmt.Sprintf("Updated the promotion pull request %s %s: merge it to promote.\n\n", link, from)
	case promoteKeep:
		return fmt.Sprintf("The promotion pull request %s %s already carries this.\n\n", link, from)
	default:
		return fmt.Sprintf("%s already holds what %s holds: nothing to promote.\n\n", markdown.Quote(spec.DestBranch), markdown.Quote(spec.HydrateTo))
	}
}
