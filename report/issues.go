package report

import (
	"context"
	"fmt"

	"github.com/google/go-github/v60/github"

	"strata.dev/strata/engine/markdown"
)

// maxIssueTitle is GitHub's limit on an issue title, in characters.
const maxIssueTitle = 256

// issueBody redacts a body and cuts it to GitHub's limit.
func (r *Reporter) issueBody(body string) *string {
	if parts := SplitComment(r.redact(body), MaxCommentRunes); len(parts) > 1 {
		return github.String(parts[0])
	}
	return github.String(r.redact(body))
}

// CreateIssue opens an issue and returns its number.
func (r *Reporter) CreateIssue(ctx context.Context, title, body string) (int, error) {
	is, _, err := r.rest.Issues.Create(ctx, r.Owner, r.Repo, &github.IssueRequest{
		Title: github.String(markdown.Cut(r.redact(title), maxIssueTitle, "…")), Body: r.issueBody(body),
	})
	if err != nil {
		return 0, fmt.Errorf("open an issue on %s/%s: %w", r.Owner, r.Repo, err)
	}
	return is.GetNumber(), nil
}

// EditIssue replaces an issue's body.
func (r *Reporter) EditIssue(ctx context.Context, number int, body string) error {
	if _, _, err := r.rest.Issues.Edit(ctx, r.Owner, r.Repo, number, &github.IssueRequest{Body: r.issueBody(body)}); err != nil {
		return fmt.Errorf("edit %s/%s#%d: %w", r.Owner, r.Repo, number, err)
	}
	return nil
}

// CloseIssue closes an issue as completed.
func (r *Reporter) CloseIssue(ctx context.Context, number int) error {
	req := &github.IssueRequest{State: github.String("closed"), StateReason: github.String("completed")}
	if _, _, err := r.rest.Issues.Edit(ctx, r.Owner, r.Repo, number, req); err != nil {
		return fmt.Errorf("close %s/%s#%d: %w", r.Owner, r.Repo, number, err)
	}
	return nil
}

// IssueOpen says whether an issue is still open; one deleted or
// transferred away counts as closed.
func (r *Reporter) IssueOpen(ctx context.Context, number int) (bool, error) {
	is, resp, err := r.rest.Issues.Get(ctx, r.Owner, r.Repo, number)
	if resp != nil && (resp.StatusCode == 404 || resp.StatusCode == 410) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("read %s/%s#%d: %w", r.Owner, r.Repo, number, err)
	}
	return is.GetState() == "open" && is.PullRequestLinks == nil, nil
}
