package githubtest

import (
	"fmt"
	"slices"
)

// GitHub's merge queue, as far as Strata sees it: a group of queued pull
// requests gets a head commit on a gh-readonly-queue branch (here by the
// "merge" method: one merge commit per pull request, each on top of the
// one before, the first on the base), a merge_group webhook asks for its
// checks, and the group merges once its required checks pass.

// MergeGroup is a group of the merge queue.
type MergeGroup struct {
	Repo *Repo
	// Base is the branch the group merges into, BaseSHA its commit when
	// the group was made; HeadRef the group's full ref, naming the last
	// pull request as GitHub does.
	Base, BaseSHA, HeadSHA, HeadRef string
	PRs                             []int
	// commits are each pull request's merge commit in the group.
	commits map[int]string
}

// QueueGroup queues the pull requests, in order, into their base's merge
// queue and returns the group that holds them all.
func (r *Repo) QueueGroup(numbers ...int) *MergeGroup {
	r.s.mu.Lock()
	defer r.s.mu.Unlock()
	if len(numbers) == 0 {
		r.s.t.Fatalf("githubtest: QueueGroup: no pull request")
	}
	base := r.mustPR(numbers[0]).pr.baseRef
	g := &MergeGroup{Repo: r, Base: base, BaseSHA: r.refs["heads/"+base], PRs: numbers, commits: map[int]string{}}
	s, tip := r.s, g.BaseSHA
	var head string
	for _, n := range numbers {
		is := r.mustPR(n)
		if is.state != "open" || is.pr.baseRef != base {
			r.s.t.Fatalf("githubtest: QueueGroup: #%d is %s into %s, not open into %s", n, is.state, is.pr.baseRef, base)
		}
		head = is.pr.headRepo.refs["heads/"+is.pr.headRef]
		tip = s.putCommit(s.buildTree(mergedFiles(s, tip, head)), []string{tip, head},
			fmt.Sprintf("Merge pull request #%d from %s/%s", n, is.pr.headRepo.Owner, is.pr.headRef), is.author)
		g.commits[n] = tip
	}
	g.HeadSHA = tip
	branch := fmt.Sprintf("gh-readonly-queue/%s/pr-%d-%s", base, numbers[len(numbers)-1], head)
	r.refs["heads/"+branch] = tip
	g.HeadRef = "refs/heads/" + branch
	return g
}

// mergedFiles are the files of base with the changes head made since their
// merge base, as a merge without conflicts makes them.
func mergedFiles(s *Server, base, head string) map[string]fileEntry {
	files := s.commitFiles(base)
	mb := s.commitFiles(s.mergeBase(base, head))
	theirs := s.commitFiles(head)
	for p, f := range theirs {
		if mb[p] != f {
			files[p] = f
		}
	}
	for p := range mb {
		if _, ok := theirs[p]; !ok {
			delete(files, p)
		}
	}
	return files
}

// MergeGroupEvent returns the merge_group payload of the group:
// "checks_requested", or "destroyed" with reason (merged, invalidated,
// dequeued).
func (g *MergeGroup) MergeGroupEvent(action, reason string) (Payload, string) {
	r := g.Repo
	r.s.mu.Lock()
	defer r.s.mu.Unlock()
	last := r.mustPR(g.PRs[len(g.PRs)-1])
	p := r.base(action, last.author)
	if action == "destroyed" {
		p["reason"] = reason
	}
	cm := r.s.commitObj(g.HeadSHA)
	sig := map[string]any{"name": cm.author, "email": cm.email}
	p["merge_group"] = map[string]any{
		"head_sha": g.HeadSHA, "head_ref": g.HeadRef, "base_sha": g.BaseSHA, "base_ref": "refs/heads/" + g.Base,
		"head_commit": map[string]any{"id": g.HeadSHA, "tree_id": cm.tree, "message": cm.message, "timestamp": cm.date,
			"author": sig, "committer": sig},
	}
	return p, "merge_group"
}

// Merge merges the group as the queue does once the checks named required
// pass on its head (success, neutral or skipped, as GitHub counts them):
// the base moves to the group's head, each pull request is merged by its
// commit in the group, and the queue's branch goes. It returns why not
// when a required check has not passed or the base moved.
func (g *MergeGroup) Merge(required ...string) error {
	r := g.Repo
	r.s.mu.Lock()
	defer r.s.mu.Unlock()
	for _, name := range required {
		var last *checkRun
		for _, cr := range r.checkRuns {
			if cr.HeadSHA == g.HeadSHA && cr.Name == name {
				last = cr
			}
		}
		if last == nil || last.Status != "completed" || !slices.Contains([]string{"success", "neutral", "skipped"}, last.Conclusion) {
			state := "missing"
			if last != nil {
				state = last.Status + " " + last.Conclusion
			}
			return fmt.Errorf("required check %s on %s is %s", name, g.HeadSHA[:7], state)
		}
	}
	if r.refs["heads/"+g.Base] != g.BaseSHA {
		return fmt.Errorf("%s moved since the group was made", g.Base)
	}
	r.refs["heads/"+g.Base] = g.HeadSHA
	delete(r.refs, "heads/"+g.HeadRef[len("refs/heads/"):])
	t := now()
	for _, n := range g.PRs {
		is := r.mustPR(n)
		is.state, is.closed, is.updated = "closed", &t, t
		is.pr.merged, is.pr.mergeCommit = true, g.commits[n]
	}
	return nil
}

// pullsOfCommit answers GET /repos/{owner}/{repo}/commits/{commit_sha}/pulls:
// the open pull requests whose head holds the commit (and their base does
// not), and the merged ones whose merge brought it.
func (s *Server) pullsOfCommit(c *call) {
	sha, ok := c.repo.resolve(c.params["commit_sha"])
	if !ok {
		c.invalid("No commit found for SHA: " + c.params["commit_sha"])
		return
	}
	out := []any{}
	for _, n := range sortedIssues(c.repo) {
		is := c.repo.issues[n]
		pr := is.pr
		if pr == nil {
			continue
		}
		switch {
		case pr.merged:
			if pr.mergeCommit == sha || s.commitObj(pr.mergeCommit).parents[1] == sha {
				out = append(out, c.repo.pullJSON(is))
			}
		case is.state == "open":
			head := pr.headRepo.refs["heads/"+pr.headRef]
			if s.ancestors(head)[sha] && !s.ancestors(c.repo.refs["heads/"+pr.baseRef])[sha] {
				out = append(out, c.repo.pullJSON(is))
			}
		}
	}
	c.page(out)
}

// sortedIssues are the numbers of the repository's issues, in order.
func sortedIssues(r *Repo) []int {
	var out []int
	for n := range r.issues {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}
