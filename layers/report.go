package layers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"strata.dev/strata/checks"
	"strata.dev/strata/engine/markdown"
	"strata.dev/strata/engine/terraform"
	"strata.dev/strata/jobs"
	"strata.dev/strata/redact"
	"strata.dev/strata/report"
	"strata.dev/strata/store"
	"strata.dev/strata/words"
	"strata.dev/strata/worker"
)

// planMarker tags Strata's plan comments, so that earlier ones are minimized.
const planMarker = "<!-- strata:plan -->"

// layerReport is one layer's part of a batch's comment, as stored (redacted,
// without the plan file and the sensitive values).
type layerReport struct {
	Layer    string `json:"layer"`
	Position int    `json:"position"`
	layerAt
	Result *terraform.PlanResult `json:"result,omitempty"`
	Error  string                `json:"error,omitempty"`
	// BlockedBy is the pull request holding the lock when nothing ran.
	BlockedBy int `json:"blocked_by,omitempty"`
	// Cancelled: the plan did not run, or was stopped (Error says why).
	Cancelled bool   `json:"cancelled,omitempty"`
	LogURL    string `json:"log_url,omitempty"`
	// Policy is what the layer's policy sets found (policy.go), nil when
	// none judges it.
	Policy *policyReport `json:"policy,omitempty"`
	// CodeOwners is why an /apply would be refused for code owners when
	// the layer was planned (codeownersNext), "" when it would not.
	CodeOwners string `json:"codeowners,omitempty"`
}

// layerAt is where a layer is planned, as its part of the comment names it.
// Reports stored before it existed have it empty.
type layerAt struct {
	Dir          string `json:"dir,omitempty"`
	Workspace    string `json:"workspace,omitempty"`
	HeadSHA      string `json:"head_sha,omitempty"`
	LocksOnApply bool   `json:"locks_on_apply,omitempty"`
	// OnMerge: merging the pull request applies the layer.
	OnMerge bool `json:"on_merge,omitempty"`
}

// planAt is where a plan job plans its layer.
func planAt(a jobs.LayerPlan) layerAt {
	return layerAt{Dir: a.Layer.Dir, Workspace: a.Layer.Workspace, HeadSHA: a.HeadSHA, LocksOnApply: a.Layer.LockOnApply, OnMerge: a.Layer.OnMerge}
}

// finishBatchItem stores a layer's report; the layer that completes the
// batch posts the comment and minimizes the earlier plan comments.
func finishBatchItem(ctx context.Context, d *worker.Deps, rep *report.Reporter, repo jobs.Repo, pr int, batch string, r layerReport) error {
	if r.Result != nil {
		stored := *r.Result
		stored.PlanFile, stored.Sensitive = nil, nil
		r.Result = &stored
	}
	// Masked before it is encoded: a secret that JSON escapes would not be
	// found in the encoding.
	body, err := redact.JSON(r, rep.Redact)
	if err != nil {
		return err
	}
	items, err := d.Store.FinishBatchItem(ctx, batch, store.BatchItem{Layer: r.Layer, Position: r.Position, Report: string(body)})
	if err != nil || items == nil {
		return err
	}
	reports := make([]layerReport, 0, len(items))
	for _, it := range items {
		var lr layerReport
		if err := json.Unmarshal([]byte(it.Report), &lr); err != nil {
			return fmt.Errorf("plan batch %s, layer %s: %w", batch, it.Layer, err)
		}
		reports = append(reports, lr)
	}
	posted, err := rep.Comment(ctx, pr, planMarker+"\n"+planComment(reports))
	if err != nil {
		return err
	}
	if d.BotLogin == "" {
		return nil
	}
	keep := map[int64]bool{}
	for _, c := range posted {
		keep[c.GetID()] = true
	}
	return rep.MinimizeOwnComments(ctx, pr, d.BotLogin, planMarker, keep)
}

// closeLog ends a run's log once Terraform is done with the layer: the
// values the plan marks sensitive mask what is still to be stored and,
// rewritten, what was stored while only the sensitive inputs were known.
// It returns the reporter that masks them in checks and comments too.
func closeLog(ctx context.Context, d *worker.Deps, log *worker.LogWriter, rep *report.Reporter, sensitive []string) *report.Reporter {
	log.Mask(sensitive...)
	log.Close()
	if len(sensitive) == 0 {
		return rep // nothing but the server's redactor, which stored it
	}
	runRep := runReporter(rep, sensitive)
	d.MaskLog(ctx, sensitive...)
	return runRep
}

// runReporter is the reporter of one run: it also masks the values that
// run's plan marks sensitive, without adding them to the server's redactor
// for good.
func runReporter(rep *report.Reporter, sensitive []string) *report.Reporter {
	if len(sensitive) == 0 {
		return rep
	}
	local, _ := redact.New(nil)
	local.Add(sensitive...)
	r := *rep
	global := rep.Redact
	r.Redact = func(s string) string {
		s = local.String(s)
		if global != nil {
			s = global(s)
		}
		return s
	}
	return &r
}

// planActions are the buttons of a plan check.
var planActions = []report.Action{
	{Label: "Apply", Description: "Apply this plan", Identifier: checks.ButtonApply},
	{Label: "Re-plan", Description: "Plan this layer again", Identifier: checks.ButtonPlan},
	{Label: "Unlock", Description: "Release the lock, discard the plan", Identifier: checks.ButtonUnlock},
}

// planCheck is a completed plan as its check shows it.
func planCheck(a jobs.LayerPlan, r *terraform.PlanResult, logURL string) report.Check {
	var b strings.Builder
	b.WriteString(r.MarkdownSummary())
	fmt.Fprintf(&b, "\nPlanned at %s for @%s with %s %s. Comment `/apply %s` or press Apply to apply exactly this plan.\n",
		a.HeadSHA, a.User, r.Engine.Name(), r.TerraformVersion, a.Target)
	if a.Layer.LockOnApply {
		b.WriteString(onApplyNote)
	}
	return report.Check{
		Name: checks.Plan(a.Target), HeadSHA: a.HeadSHA, Conclusion: "success", ExternalID: checks.ExternalID(a.PR),
		Title: r.Summary(), Summary: b.String(), Text: markdown.Block("", r.Text), LogURL: logURL, DetailsURL: logURL,
		Actions: planActions,
	}
}

// failedCheck reports a run that failed with Terraform's message.
func failedCheck(name, headSHA string, pr int, err error, logURL string, actions []report.Action) report.Check {
	title := "Failed"
	msg := err.Error()
	var tfErr *terraform.Error
	if errors.As(err, &tfErr) {
		title = tfErr.Name() + " failed"
		if tfErr.Message != "" {
			msg = tfErr.Message
		}
	}
	if errors.As(err, new(*terraform.VersionError)) {
		title = "No binary for this layer"
	}
	return report.Check{
		Name: name, HeadSHA: headSHA, Conclusion: "failure", ExternalID: checks.ExternalID(pr),
		Title: title, Summary: markdown.Block("", msg), LogURL: logURL, DetailsURL: logURL, Actions: actions,
	}
}

// updateApplied sets `strata/applied` on the head: success when every layer
// planned with changes at this head is applied, in progress otherwise. A
// head without plans gets no check.
func updateApplied(ctx context.Context, d *worker.Deps, rep *report.Reporter, repo jobs.Repo, pr int, headSHA string) error {
	plans, err := d.Store.PlansOfPR(ctx, repo.FullName, pr)
	if err != nil {
		return err
	}
	var pending, applied []string
	total := 0
	for _, p := range plans {
		if p.HeadSHA != headSHA {
			continue
		}
		total++
		switch {
		case !p.HasChanges:
		case p.AppliedAt.IsZero():
			pending = append(pending, p.Layer)
		default:
			applied = append(applied, p.Layer)
		}
	}
	cur, err := rep.FindCheck(ctx, headSHA, checks.Applied)
	if err != nil {
		return err
	}
	if total == 0 && cur == nil {
		return nil
	}
	c := report.Check{Name: checks.Applied, HeadSHA: headSHA, ExternalID: checks.ExternalID(pr)}
	if len(pending) == 0 {
		c.Conclusion = "success"
		c.Title = "Every layer with changes is applied"
		c.Summary = fmt.Sprintf("Applied at this commit: %s.", report.Names(applied))
	} else {
		c.Status = "in_progress"
		c.Title = fmt.Sprintf("%d %s to apply", len(pending), words.Plural(len(pending), "layer", "layers"))
		c.Summary = fmt.Sprintf("Planned with changes and not applied yet: %s. Comment `/apply` to apply them.", report.Names(pending))
	}
	// A completed check cannot go back to in progress: a new one replaces it.
	if cur == nil || (cur.Completed() && c.Conclusion == "") {
		_, err = rep.CreateCheck(ctx, c)
		return err
	}
	return rep.UpdateCheck(ctx, cur.ID, c)
}
