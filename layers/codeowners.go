package layers

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/hmarr/codeowners"

	"strata.dev/strata/config"
	"strata.dev/strata/engine/terraform"
	"strata.dev/strata/jobs"
	"strata.dev/strata/pull"
	"strata.dev/strata/worker"
)

// GitHub's bounds on CODEOWNERS: a larger file is not loaded. A line is
// bounded by the parser's scanner, which would stop at a longer one and
// silently drop the rules after it.
const (
	maxCodeownersBytes = 3 << 20
	maxCodeownersLine  = 64 << 10
)

// treeAt gives the head's tree, extracted, for the local modules of the
// layers; release it when done (worker.Deps.Fetch).
type treeAt func() (root string, release func(), err error)

// readCodeowners reads what the codeowners requirement of the layers needs,
// when one of them requires it: the default branch's CODEOWNERS (never the
// PR's, so that a PR cannot name its own owners), the files of each layer
// the PR changes (with the local modules its head calls, from tree, read
// only when a changed file is not already the layer's), the permission of
// each approving reviewer, and, once some approval could count, the
// members of the teams that own those files, each team once per job.
func readCodeowners(ctx context.Context, pr pull.Context, layers []config.Layer, tree treeAt, f *requirementFacts) error {
	return readCodeownersAt(ctx, pr, pr.DefaultBranch(), layers, tree, f)
}

// readCodeownersAt is readCodeowners with CODEOWNERS read at ref, a commit
// of the default branch: a merged PR's base, so that the PR's own edits to
// CODEOWNERS, merged by then, do not judge it. Which layers need it
// (requiringCodeowners) and which teams' members are read (teamsToAsk)
// are decided on what was read before them.
func readCodeownersAt(ctx context.Context, pr pull.Context, ref string, layers []config.Layer, tree treeAt, f *requirementFacts) error {
	owned := requiringCodeowners(layers)
	if len(owned) == 0 {
		return nil
	}
	co := codeownersFacts{Read: true, Branch: pr.DefaultBranch(), Files: map[string][]string{},
		Teams: map[string][]string{}, Unreadable: map[string]string{}}
	if err := readCodeownersFile(ctx, pr, ref, &co); err != nil {
		return err
	}
	files, err := readOwnedFiles(ctx, pr, owned, tree, &co)
	if err != nil {
		return err
	}
	if err := readReviewers(ctx, pr, f); err != nil {
		return err
	}
	if err := readOwnerTeams(ctx, pr, teamsToAsk(*f, files, co.Rules), &co); err != nil {
		return err
	}
	f.Codeowners = co
	return nil
}

// readOwnedFiles reads the files the PR changes that each layer counts as
// its own (with the local modules its head calls) into co.Files, and
// returns them all.
func readOwnedFiles(ctx context.Context, pr pull.Context, owned []config.Layer, tree treeAt, co *codeownersFacts) ([]string, error) {
	changed, err := pr.ChangedFiles(ctx)
	if err != nil {
		return nil, err
	}
	modules, err := codeownersModules(owned, changed, tree)
	if err != nil {
		return nil, err
	}
	var files []string
	for _, l := range owned {
		co.Files[l.Name] = layerFiles(l, changed, modules[l.Name])
		files = append(files, co.Files[l.Name]...)
	}
	return files, nil
}

// readReviewers reads the PR's reviews and the permission of each
// approving reviewer, unless the facts have them already.
func readReviewers(ctx context.Context, pr pull.Context, f *requirementFacts) error {
	var err error
	if f.Reviews == nil {
		if f.Reviews, err = pr.Reviews(ctx); err != nil {
			return err
		}
	}
	if f.Reviewers == nil {
		f.Reviewers = map[string]pull.Permission{}
	}
	for _, r := range approvals(f.Reviews) {
		if _, ok := f.Reviewers[r.Author]; !ok {
			if f.Reviewers[r.Author], err = pr.Permission(ctx, r.Author); err != nil {
				return err
			}
		}
	}
	return nil
}

// readOwnerTeams reads the members of each team into co.Teams; a team
// GitHub does not show is noted in co.Unreadable with why.
func readOwnerTeams(ctx context.Context, pr pull.Context, teams []string, co *codeownersFacts) error {
	for _, team := range teams {
		org, slug, _ := strings.Cut(team, "/")
		members, err := pr.TeamMembers(ctx, org, slug)
		switch {
		case errors.Is(err, pull.ErrNotFound):
			co.Unreadable[strings.ToLower(team)] = "GitHub does not show it to Strata (no such team, or the App lacks the organization's Members: read permission)"
		case err != nil:
			return err
		default:
			co.Teams[strings.ToLower(team)] = members
		}
	}
	return nil
}

// readCodeownersFile reads the first CODEOWNERS of the default branch at ref, in
// GitHub's order, and parses it. A file GitHub would not load, or with a
// line that does not parse, is a Problem: GitHub skips such a line, but a
// skipped rule could leave a file to a laxer one, so nothing is applied
// until it is fixed.
func readCodeownersFile(ctx context.Context, pr pull.Repository, ref string, co *codeownersFacts) error {
	for _, p := range codeownersFile {
		text, err := pr.File(ctx, ref, p)
		if errors.Is(err, pull.ErrNotFound) {
			continue
		}
		if err != nil {
			return err
		}
		co.File = p
		co.Rules, co.Problem = parseCodeowners(text)
		return nil
	}
	return nil
}

// parseCodeowners parses a CODEOWNERS file, or says why it cannot be used.
func parseCodeowners(text []byte) (codeowners.Ruleset, string) {
	if len(text) > maxCodeownersBytes {
		return nil, "it is larger than GitHub's limit of 3 MB"
	}
	for i, line := range bytes.Split(text, []byte("\n")) {
		if len(line) >= maxCodeownersLine {
			return nil, fmt.Sprintf("line %d is longer than 64 KiB", i+1)
		}
	}
	rules, err := codeowners.ParseFile(bytes.NewReader(text))
	if err != nil {
		return nil, err.Error()
	}
	return rules, ""
}

// codeownersModules reads the local modules of the layers at the head,
// when some changed file is not already one of a layer's own: only a
// module could then make it the layer's.
func codeownersModules(layers []config.Layer, changed []string, tree treeAt) (map[string][]string, error) {
	need := false
	for _, l := range layers {
		if len(layerFiles(l, changed, nil)) < len(uniqueFiles(changed)) {
			need = true
		}
	}
	if !need {
		return nil, nil
	}
	root, release, err := tree()
	if err != nil {
		return nil, err
	}
	defer release()
	out := map[string][]string{}
	for _, l := range layers {
		out[l.Name] = terraform.LocalModules(root, l.Dir)
	}
	return out, nil
}

// uniqueFiles are the changed files, each once (a rename lists a file under
// both names, and a file may come back as another's old name).
func uniqueFiles(files []string) []string {
	out := make([]string, len(files))
	for i, f := range files {
		out[i] = path.Clean(f)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// fetchTree is treeAt for a job: the repository's tree at sha.
func fetchTree(ctx context.Context, d *worker.Deps, repo jobs.Repo, sha string) treeAt {
	return func() (string, func(), error) { return d.Fetch(ctx, repo, sha) }
}

// codeownersNext is what the plan comment of a layer that requires code
// owners says they must still approve before an /apply, or "": the
// refusal an /apply would get now. It only informs, so a failure to read
// is logged and the comment goes without it.
func codeownersNext(ctx context.Context, d *worker.Deps, a jobs.LayerPlan, res *terraform.PlanResult) string {
	if !a.Layer.CodeOwners || res == nil || !res.HasChanges {
		return ""
	}
	why, err := planCodeowners(ctx, d, a)
	if err != nil {
		worker.Warn(ctx, fmt.Errorf("%s#%d, layer %s: %w", a.FullName, a.PR, a.Target, err), "read the code owners for the plan comment")
		return ""
	}
	return why
}

func planCodeowners(ctx context.Context, d *worker.Deps, a jobs.LayerPlan) (string, error) {
	pr, err := d.PR(ctx, a.Repo, a.PR)
	if err != nil {
		return "", err
	}
	cfg, err := d.LoadRepoConfig(ctx, pr, a.HeadSHA, pr.DefaultBranch())
	if err != nil {
		return "", err
	}
	all, err := repoLayers(ctx, d, a.Repo, a.HeadSHA, cfg)
	if err != nil {
		return "", err
	}
	i := slices.IndexFunc(all, func(l config.Layer) bool { return l.Name == a.Target })
	if i < 0 {
		return "", nil
	}
	f := requirementFacts{Author: pr.Author(), Head: a.HeadSHA}
	if err := readCodeowners(ctx, pr, all[i:i+1], fetchTree(ctx, d, a.Repo, a.HeadSHA), &f); err != nil {
		return "", err
	}
	if !f.Codeowners.Read {
		return "", nil // the layer no longer requires code owners
	}
	return unmetCodeowners(a.Target, f), nil
}
