package report

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/google/go-github/v60/github"
	"github.com/shurcooL/githubv4"

	"strata.dev/strata/engine/markdown"
)

// Reporter writes to one repository with an installation's clients. It
// only writes (and finds the checks it wrote); reading a pull request's
// facts is package pull's job.
type Reporter struct {
	rest  *github.Client
	v4    *githubv4.Client
	Owner string
	Repo  string
	// Redact is applied to every text that leaves for GitHub.
	Redact func(string) string
	// Reported, when set, hears of every check written, after GitHub took
	// it: the run records which check shows it, and its conclusion.
	Reported func(ctx context.Context, id int64, c Check)
}

// New returns a reporter on owner/repo that redacts with redact.
func New(rest *github.Client, v4 *githubv4.Client, owner, repo string, redact func(string) string) *Reporter {
	return &Reporter{rest: rest, v4: v4, Owner: owner, Repo: repo, Redact: redact}
}

// Check is the content of a check run.
type Check struct {
	Name       string
	HeadSHA    string
	Status     string // queued, in_progress, completed
	Conclusion string // with completed: success, failure, neutral, cancelled, action_required, skipped
	Title      string
	Summary    string
	Text       string
	DetailsURL string
	ExternalID string
	Actions    []Action
	// LogURL is where the full output is, named in the note when the output
	// is cut to GitHub's limit.
	LogURL string
}

// Action is a check run button: its identifier comes back in the
// check_run requested_action webhook.
type Action struct {
	Label       string
	Description string
	Identifier  string
}

func (r *Reporter) redact(s string) string {
	if r.Redact == nil {
		return s
	}
	return r.Redact(s)
}

func (r *Reporter) output(c Check) *github.CheckRunOutput {
	if c.Title == "" && c.Summary == "" {
		return nil
	}
	// A check's title is plain text: GitHub renders no Markdown and no
	// mention in it, so PR text needs no quoting there, only one line.
	title := strings.Join(strings.Fields(c.Title), " ")
	if title == "" {
		title = c.Name
	}
	out := &github.CheckRunOutput{
		Title:   github.String(markdown.Cut(r.redact(title), 1000, "…")),
		Summary: github.String(markdown.Cut(r.redact(c.Summary), MaxCheckOutput, CutNote(c.LogURL))),
	}
	if c.Text != "" {
		out.Text = github.String(markdown.Cut(r.redact(c.Text), MaxCheckOutput, CutNote(c.LogURL)))
	}
	return out
}

func actions(in []Action) ([]*github.CheckRunAction, error) {
	if len(in) > MaxActions {
		return nil, fmt.Errorf("a check run has at most %d buttons, got %d", MaxActions, len(in))
	}
	out := make([]*github.CheckRunAction, 0, len(in))
	for _, a := range in {
		if len(a.Identifier) > MaxIdentifier || len(a.Label) > MaxIdentifier || len(a.Description) > 40 {
			return nil, fmt.Errorf("button %q is over GitHub's length limits", a.Identifier)
		}
		out = append(out, &github.CheckRunAction{Label: a.Label, Description: a.Description, Identifier: a.Identifier})
	}
	return out, nil
}

// CreateCheck creates a check run and returns its id.
func (r *Reporter) CreateCheck(ctx context.Context, c Check) (int64, error) {
	acts, err := actions(c.Actions)
	if err != nil {
		return 0, err
	}
	opts := github.CreateCheckRunOptions{
		Name:    c.Name,
		HeadSHA: c.HeadSHA,
		Output:  r.output(c),
		Actions: acts,
	}
	setStatus(&opts.Status, &opts.Conclusion, &opts.CompletedAt, c)
	if c.DetailsURL != "" {
		opts.DetailsURL = github.String(c.DetailsURL)
	}
	if c.ExternalID != "" {
		opts.ExternalID = github.String(c.ExternalID)
	}
	run, _, err := r.rest.Checks.CreateCheckRun(ctx, r.Owner, r.Repo, opts)
	if err != nil {
		return 0, fmt.Errorf("create check %q on %s/%s@%s: %w", c.Name, r.Owner, r.Repo, Short(c.HeadSHA), err)
	}
	if r.Reported != nil {
		r.Reported(ctx, run.GetID(), c)
	}
	return run.GetID(), nil
}

// UpdateCheck replaces a check run's status, output and buttons.
func (r *Reporter) UpdateCheck(ctx context.Context, id int64, c Check) error {
	acts, err := actions(c.Actions)
	if err != nil {
		return err
	}
	opts := github.UpdateCheckRunOptions{Name: c.Name, Output: r.output(c), Actions: acts}
	setStatus(&opts.Status, &opts.Conclusion, &opts.CompletedAt, c)
	if c.DetailsURL != "" {
		opts.DetailsURL = github.String(c.DetailsURL)
	}
	if c.ExternalID != "" {
		opts.ExternalID = github.String(c.ExternalID)
	}
	if _, _, err := r.rest.Checks.UpdateCheckRun(ctx, r.Owner, r.Repo, id, opts); err != nil {
		return fmt.Errorf("update check %q (%d) on %s/%s: %w", c.Name, id, r.Owner, r.Repo, err)
	}
	if r.Reported != nil {
		r.Reported(ctx, id, c)
	}
	return nil
}

func setStatus(status, conclusion **string, completedAt **github.Timestamp, c Check) {
	if c.Status != "" {
		*status = github.String(c.Status)
	}
	if c.Conclusion != "" {
		*conclusion = github.String(c.Conclusion)
		*completedAt = &github.Timestamp{Time: time.Now()}
		if c.Status == "" {
			*status = github.String("completed")
		}
	}
}

// Found is a check run as FindCheck finds it.
type Found struct {
	ID     int64
	Status string // queued, in_progress, completed
}

// Completed reports whether the check is completed.
func (f *Found) Completed() bool { return f.Status == "completed" }

// FindCheck returns the newest check run with this name on a commit, or nil.
func (r *Reporter) FindCheck(ctx context.Context, sha, name string) (*Found, error) {
	res, _, err := r.rest.Checks.ListCheckRunsForRef(ctx, r.Owner, r.Repo, sha, &github.ListCheckRunsOptions{
		CheckName: github.String(name), Filter: github.String("latest"),
	})
	if err != nil {
		return nil, fmt.Errorf("list checks %q on %s/%s@%s: %w", name, r.Owner, r.Repo, Short(sha), err)
	}
	if len(res.CheckRuns) == 0 {
		return nil, nil
	}
	return &Found{ID: res.CheckRuns[0].GetID(), Status: res.CheckRuns[0].GetStatus()}, nil
}

// CheckStatus is the status of a check run Strata created.
func (r *Reporter) CheckStatus(ctx context.Context, id int64) (string, error) {
	cr, _, err := r.rest.Checks.GetCheckRun(ctx, r.Owner, r.Repo, id)
	if err != nil {
		return "", fmt.Errorf("read check %d on %s/%s: %w", id, r.Owner, r.Repo, err)
	}
	return cr.GetStatus(), nil
}

// Comment posts a comment on an issue or PR, split into several when it is
// over GitHub's limit. It returns the created comments.
func (r *Reporter) Comment(ctx context.Context, number int, body string) ([]*github.IssueComment, error) {
	var out []*github.IssueComment
	for _, part := range SplitComment(r.redact(body), MaxCommentRunes) {
		c, _, err := r.rest.Issues.CreateComment(ctx, r.Owner, r.Repo, number, &github.IssueComment{Body: github.String(part)})
		if err != nil {
			return out, fmt.Errorf("comment on %s/%s#%d: %w", r.Owner, r.Repo, number, err)
		}
		out = append(out, c)
	}
	return out, nil
}

// EditComment replaces a comment's body, cut to GitHub's limit.
func (r *Reporter) EditComment(ctx context.Context, id int64, body string) error {
	body = r.redact(body)
	if parts := SplitComment(body, MaxCommentRunes); len(parts) > 1 {
		body = parts[0]
	}
	if _, _, err := r.rest.Issues.EditComment(ctx, r.Owner, r.Repo, id, &github.IssueComment{Body: github.String(body)}); err != nil {
		return fmt.Errorf("edit comment %d on %s/%s: %w", id, r.Owner, r.Repo, err)
	}
	return nil
}

// React adds a reaction (for example "eyes") to an issue comment.
func (r *Reporter) React(ctx context.Context, commentID int64, content string) error {
	if _, _, err := r.rest.Reactions.CreateIssueCommentReaction(ctx, r.Owner, r.Repo, commentID, content); err != nil {
		return fmt.Errorf("react %s to comment %d on %s/%s: %w", content, commentID, r.Owner, r.Repo, err)
	}
	return nil
}

// MinimizeOutdated hides a comment as outdated (GraphQL minimizeComment).
func (r *Reporter) MinimizeOutdated(ctx context.Context, nodeID string) error {
	var m struct {
		MinimizeComment struct {
			MinimizedComment struct {
				IsMinimized bool
			}
		} `graphql:"minimizeComment(input: $input)"`
	}
	input := githubv4.MinimizeCommentInput{
		SubjectID:  githubv4.ID(nodeID),
		Classifier: githubv4.ReportedContentClassifiersOutdated,
	}
	if err := r.v4.Mutate(ctx, &m, input, nil); err != nil {
		return fmt.Errorf("minimize comment %s on %s/%s: %w", nodeID, r.Owner, r.Repo, err)
	}
	return nil
}

// MinimizeOwnComments minimizes earlier comments of login on a PR whose body
// contains marker (a hidden HTML comment that tags one kind of report).
func (r *Reporter) MinimizeOwnComments(ctx context.Context, number int, login, marker string, keep map[int64]bool) error {
	opts := &github.IssueListCommentsOptions{ListOptions: github.ListOptions{PerPage: 100}}
	for {
		comments, resp, err := r.rest.Issues.ListComments(ctx, r.Owner, r.Repo, number, opts)
		if err != nil {
			return fmt.Errorf("list comments of %s/%s#%d: %w", r.Owner, r.Repo, number, err)
		}
		for _, c := range comments {
			if c.GetUser().GetLogin() != login || keep[c.GetID()] || !contains(c.GetBody(), marker) {
				continue
			}
			if err := r.MinimizeOutdated(ctx, c.GetNodeID()); err != nil {
				return err
			}
		}
		if resp.NextPage == 0 {
			return nil
		}
		opts.Page = resp.NextPage
	}
}

func contains(s, sub string) bool { return sub != "" && strings.Contains(s, sub) }
