package layers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"strata.dev/strata/checks"
	"strata.dev/strata/config"
	"strata.dev/strata/engine/markdown"
	"strata.dev/strata/engine/terraform"
	"strata.dev/strata/jobs"
	"strata.dev/strata/policy"
	"strata.dev/strata/redact"
	"strata.dev/strata/report"
	"strata.dev/strata/store"
	"strata.dev/strata/words"
	"strata.dev/strata/worker"
)

// Policy as code after a plan (docs/governance.md): the layer's policy
// sets, from the server config and from the default branch's
// .strata.yaml (never the PR's), judge the plan's JSON; the outcome is
// stored for the apply gate (policyGate) and shown as the
// strata/policy: LAYER check and in the plan comment.

// maxStoredFindings bounds the findings of a set kept with the evaluation
// and listed in the comment; the check lists them all, within GitHub's limit.
const maxStoredFindings = 20

// policyReport is the policy part of a layer's report in the plan comment.
type policyReport struct {
	Sets []setOutcome `json:"sets"`
	// Edits: the PR changes policy files or the policies of .strata.yaml,
	// which judge it only once merged.
	Edits bool `json:"edits,omitempty"`
}

// layerPolicy is what judges a layer: the sets read from the default
// branch at SHA, and names the layer chooses that no set has.
type layerPolicy struct {
	SHA     string
	Sets    []policySource
	Unknown []string
	// base and head are the .strata.yaml of the default branch and the PR.
	base, head *config.Repo
}

// policySource is a set and where its files are.
type policySource struct {
	config.PolicySet
	Server bool // on the server's disk, else in the repository at SHA
}

// judgePlan evaluates the layer's sets, as the run's lookup found them,
// over a plan, stores the outcome and writes the strata/policy check. It
// returns nil when no set judges the layer. Errors of the sets are
// outcomes, not errors: only GitHub and the store fail it.
func judgePlan(ctx context.Context, d *worker.Deps, rep *report.Reporter, a jobs.LayerPlan, policies *policyLookup, res *terraform.PlanResult) (*policyReport, error) {
	lp, err := policies.wait(ctx)
	if err != nil {
		return nil, err
	}
	if len(lp.Sets) == 0 && len(lp.Unknown) == 0 {
		return nil, nil
	}
	pr := &policyReport{Sets: evaluateSets(ctx, d, a.Repo, lp, res)}
	if pr.Edits, err = policyEdits(ctx, d, a, lp); err != nil {
		return nil, err
	}
	plan, err := planOf(ctx, d.Store, a.FullName, a.PR, a.Target, a.HeadSHA)
	if err != nil {
		return nil, err
	}
	// The check lists every finding; the store and the comment the first.
	v := policyGate(policyFacts{Judged: true, Plan: plan, Evaluation: &store.PolicyEvaluation{HeadSHA: plan.HeadSHA, PlanAt: plan.CreatedAt}, Sets: pr.Sets})
	if _, err := rep.CreateCheck(ctx, policyCheck(a.Target, a.HeadSHA, a.PR, lp.SHA, pr, v, nil)); err != nil {
		return nil, err
	}
	for i := range pr.Sets {
		pr.Sets[i].keepFirst(maxStoredFindings)
	}
	sets, err := redact.JSON(pr.Sets, rep.Redact)
	if err != nil {
		return nil, err
	}
	return pr, d.Store.SavePolicyEvaluation(ctx, store.PolicyEvaluation{Repo: a.FullName, PR: a.PR, Layer: a.Target,
		HeadSHA: a.HeadSHA, PlanAt: plan.CreatedAt, PolicySHA: lp.SHA, Sets: string(sets)})
}

// policiesOf reads what judges a layer: the server's sets and those of
// .strata.yaml on the default branch at its head, as the default branch
// chooses them for the layer (config.Effective: a layer only the PR has
// gets every set).
func policiesOf(ctx context.Context, d *worker.Deps, r jobs.Repo, head string, l jobs.LayerSpec) (*layerPolicy, error) {
	repo, err := d.Repo(r)
	if err != nil {
		return nil, err
	}
	sha, _, err := repo.BranchHead(ctx, "")
	if err != nil {
		return nil, err
	}
	lp := &layerPolicy{SHA: sha}
	// A default branch whose file does not parse has no sets of its own:
	// the server's still judge, and the check says why the others do not.
	lp.base, err = worker.ReadRepoConfig(ctx, repo, sha)
	var bad config.RepoErrors
	if errors.As(err, &bad) {
		lp.base, err = nil, nil
		lp.Unknown = append(lp.Unknown, config.RepoFile+" of the default branch: "+bad.Error())
	}
	if err != nil {
		return nil, err
	}
	if lp.head, err = worker.ReadRepoConfig(ctx, repo, head); errors.As(err, &bad) {
		lp.head, err = nil, nil
	}
	if err != nil {
		return nil, err
	}
	layer := config.Layer{Name: l.Name, Dir: l.Dir, Workspace: l.Workspace}
	eff := config.Effective(lp.base, &config.Repo{Layers: []config.Layer{layer}}, config.Policy{})
	all := make([]config.PolicySet, 0, len(d.Config.Policies)+len(eff.Policies))
	server := map[string]bool{}
	for _, s := range d.Config.ServerPolicySets() {
		all = append(all, s)
		server[s.Name] = true
	}
	for _, s := range eff.Policies {
		if server[s.Name] {
			lp.Unknown = append(lp.Unknown, fmt.Sprintf("set %s of %s: the server config has a set of that name, which judges in its place", s.Name, config.RepoFile))
			continue
		}
		all = append(all, s)
	}
	chosen, unknown := config.PolicySetsOf(eff.Layers[0], all)
	for _, s := range chosen {
		lp.Sets = append(lp.Sets, policySource{PolicySet: s, Server: server[s.Name]})
	}
	for _, n := range unknown {
		lp.Unknown = append(lp.Unknown, fmt.Sprintf("the layer names set %s, which neither the server config nor %s defines", n, config.RepoFile))
	}
	return lp, nil
}

// evaluateSets runs each set over the plan's JSON; what keeps a set from
// judging is its outcome's Error.
func evaluateSets(ctx context.Context, d *worker.Deps, r jobs.Repo, lp *layerPolicy, res *terraform.PlanResult) []setOutcome {
	var out []setOutcome
	var tree *os.Root
	for _, s := range lp.Sets {
		o := setOutcome{Name: s.Name, Enforcement: s.Enforcement, Owners: s.Owners}
		files, err := loadSet(ctx, d, r, lp.SHA, s, &tree)
		switch {
		case err != nil:
			o.Error = err.Error()
		case res.JSONTooLarge:
			o.Error = fmt.Sprintf("the plan's JSON is larger than the %d MiB policies evaluate", policy.MaxPlanJSON>>20)
		case res.JSON == nil:
			o.Error = "the plan's JSON could not be read (see the run's log): the policies could not judge it"
		default:
			found, err := policy.Evaluate(ctx, files, res.JSON, policy.Options{})
			if err != nil {
				o.Error = err.Error()
				break
			}
			o.DenialCount, o.WarningCount = len(found.Denials), len(found.Warnings)
			o.Denials, o.Warnings = found.Denials, found.Warnings
			if found.Dropped > 0 {
				o.Error = fmt.Sprintf("%d more findings not kept (over %d)", found.Dropped, policy.MaxFindings)
			}
		}
		out = append(out, o)
	}
	if tree != nil {
		tree.Close()
	}
	for _, u := range lp.Unknown {
		// A name no set has may be a typo of a block set: it blocks, and
		// the repository's admins fix it on the default branch.
		out = append(out, setOutcome{Name: "?", Enforcement: config.Block, Error: u})
	}
	return out
}

// loadSet reads a set's .rego files: from the server's disk, or from the
// default branch's tree at sha through an os.Root (fetched once per
// evaluation into *tree).
func loadSet(ctx context.Context, d *worker.Deps, r jobs.Repo, sha string, s policySource, tree **os.Root) ([]policy.File, error) {
	if s.Server {
		p := filepath.Clean(s.Path)
		if st, err := os.Stat(p); err == nil && !st.IsDir() {
			return policy.Load(os.DirFS(filepath.Dir(p)), filepath.Base(p))
		}
		return policy.Load(os.DirFS(p), ".")
	}
	if *tree == nil {
		root, release, err := d.Fetch(ctx, r, sha)
		if err != nil {
			return nil, fmt.Errorf("fetch the default branch at %s: %w", report.Short(sha), err)
		}
		defer release()
		if *tree, err = os.OpenRoot(root); err != nil {
			return nil, err
		}
	}
	return policy.Load((*tree).FS(), s.Path)
}

// policyEdits says whether the PR changes what judges plans: the policies
// of .strata.yaml, or a file under a set's path (the default branch's or
// the PR's). Those edits take effect after the merge.
func policyEdits(ctx context.Context, d *worker.Deps, a jobs.LayerPlan, lp *layerPolicy) (bool, error) {
	if config.PoliciesDiffer(lp.base, lp.head) {
		return true, nil
	}
	var paths []string
	for _, r := range []*config.Repo{lp.base, lp.head} {
		if r != nil {
			for _, s := range r.Policies {
				paths = append(paths, s.Path)
			}
		}
	}
	if len(paths) == 0 {
		return false, nil
	}
	pr, err := d.PR(ctx, a.Repo, a.PR)
	if err != nil {
		return false, err
	}
	files, err := pr.ChangedFiles(ctx)
	if err != nil {
		return false, err
	}
	for _, f := range files {
		for _, p := range paths {
			if f == p || strings.HasPrefix(f, strings.TrimSuffix(p, "/")+"/") || p == "." {
				if path.Ext(f) == ".rego" || f == p {
					return true, nil
				}
			}
		}
	}
	return false, nil
}

// planOf is the PR's plan of a layer at head, without its plan file.
func planOf(ctx context.Context, st *store.Store, repo string, pr int, layer, head string) (*store.Plan, error) {
	plans, err := st.PlansOfPR(ctx, repo, pr)
	if err != nil {
		return nil, err
	}
	i := slices.IndexFunc(plans, func(p *store.Plan) bool { return p.Layer == layer && p.HeadSHA == head })
	if i < 0 {
		return nil, fmt.Errorf("%s#%d: no plan of %s at %s", repo, pr, layer, report.Short(head))
	}
	return plans[i], nil
}

// policyCheck is the strata/policy check of a layer's plan: success,
// neutral with warnings (or denials of warn sets), failure listing every
// denial while a block set denies it without an owner's approval.
func policyCheck(layer, head string, pr int, sha string, r *policyReport, v policyVerdict, approvals []store.PolicyApproval) report.Check {
	c := report.Check{Name: checks.Policy(layer), HeadSHA: head, ExternalID: checks.ExternalID(pr)}
	denials, warnings := 0, 0
	for _, s := range r.Sets {
		denials += s.DenialCount
		warnings += s.WarningCount
	}
	switch v.State {
	case policyBlocked:
		c.Conclusion, c.Title = "failure", fmt.Sprintf("Blocked by policy: %s", words.Count(denials, "denial", "denials"))
		c.Summary = "Not applied until " + approvalsNeeded(layer, v.Unapproved) + "."
	case policyApproved:
		c.Conclusion, c.Title = "success", "Approved despite "+words.Count(denials, "denial", "denials")
		var by []string
		for _, a := range approvals {
			by = append(by, fmt.Sprintf("%s by @%s", markdown.Quote(a.Set), a.Approver))
		}
		c.Summary = "Approved for this plan: " + strings.Join(by, ", ") + "."
	case policyWarned:
		c.Conclusion, c.Title = "neutral", fmt.Sprintf("%s, %s", words.Count(warnings, "warning", "warnings"), words.Count(denials, "denial", "denials"))
		c.Summary = "Nothing blocks the apply; read the warnings."
	default:
		c.Conclusion, c.Title, c.Summary = "success", "Policies pass", "No set denies the plan."
	}
	c.Summary += fmt.Sprintf("\n\nJudged by the policy sets of the server config and of the default branch at %s.", markdown.Quote(report.Short(sha)))
	if r.Edits {
		c.Summary += "\n\n" + editsNote
	}
	var b strings.Builder
	for _, s := range r.Sets {
		writeSet(&b, s, -1)
	}
	c.Text = b.String()
	return c
}

// editsNote tells a PR that edits policies why its edits did not judge it.
const editsNote = "ℹ️ This pull request edits policies (the `policies` of `.strata.yaml` or the policy files); its edits take effect after merge: the default branch's policies judge it."

// writeSet writes a set's outcome: its findings as a table, at most max
// of each kind (-1: all).
func writeSet(b *strings.Builder, s setOutcome, max int) {
	mark := "✅"
	switch {
	case s.blocks():
		mark = "❌"
	case s.failed() || s.WarningCount > 0:
		mark = "⚠️"
	}
	fmt.Fprintf(b, "%s **%s** (%s, owners %s): %s, %s\n\n", mark, markdown.EscapeHTML(s.Name), s.Enforcement, ownerNames(s.Owners),
		words.Count(s.DenialCount, "denial", "denials"), words.Count(s.WarningCount, "warning", "warnings"))
	if s.Error != "" {
		b.WriteString(markdown.Block("", s.Error) + "\n")
	}
	rows := append(append([]policy.Finding(nil), s.Denials...), s.Warnings...)
	if len(rows) == 0 {
		return
	}
	b.WriteString("| | address | message |\n| --- | --- | --- |\n")
	shown := 0
	for _, f := range rows {
		if max >= 0 && shown >= max {
			fmt.Fprintf(b, "| | … | %s more in the check |\n", words.Count(len(rows)-shown, "finding", "findings"))
			break
		}
		addr := "—"
		if f.Address != "" {
			addr = markdown.QuoteCell(f.Address)
		}
		fmt.Fprintf(b, "| %s | %s | %s |\n", f.Kind, addr, markdown.QuoteCell(f.Msg))
		shown++
	}
	b.WriteString("\n")
}

// keepFirst keeps a set's first findings for the store and the comment.
func (o *setOutcome) keepFirst(n int) {
	o.Denials = o.Denials[:min(len(o.Denials), n)]
	o.Warnings = o.Warnings[:min(len(o.Warnings), n)]
}

// decodeSets reads the sets of a stored evaluation.
func decodeSets(e *store.PolicyEvaluation) ([]setOutcome, error) {
	var sets []setOutcome
	if err := json.Unmarshal([]byte(e.Sets), &sets); err != nil {
		return nil, fmt.Errorf("policy evaluation of %s#%d %s: %w", e.Repo, e.PR, e.Layer, err)
	}
	return sets, nil
}

// judgeOrWarn is judgePlan for the plan job: a failure to judge (GitHub or
// the store) is logged, and the apply gate then finds no evaluation of the
// plan and refuses until a new plan is judged.
func judgeOrWarn(ctx context.Context, d *worker.Deps, rep *report.Reporter, a jobs.LayerPlan, policies *policyLookup, res *terraform.PlanResult) *policyReport {
	pr, err := judgePlan(ctx, d, rep, a, policies, res)
	if err != nil {
		worker.Warn(ctx, fmt.Errorf("%s#%d, layer %s: %w", a.FullName, a.PR, a.Target, err), "judge the plan with the policy sets")
		return nil
	}
	return pr
}

// lines are the policy part of a layer's section in the plan comment: the
// sets that deny or warn, the note on the PR's edits, and what unblocks.
func (r *policyReport) lines(layer string) string {
	if r == nil {
		return ""
	}
	var b strings.Builder
	var blocking []setOutcome
	for _, s := range r.Sets {
		if s.failed() || s.WarningCount > 0 {
			writeSet(&b, s, 5)
		}
		if s.blocks() {
			blocking = append(blocking, s)
		}
	}
	if r.Edits {
		b.WriteString(editsNote + "\n\n")
	}
	if len(blocking) > 0 {
		b.WriteString("⛔ Blocked by policy: " + approvalsNeeded(layer, blocking) + ".\n\n")
	}
	return b.String()
}
