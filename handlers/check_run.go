package handlers

import (
	"context"

	"github.com/google/go-github/v60/github"
	"github.com/palantir/go-githubapp/githubapp"

	"strata.dev/strata/checks"
	"strata.dev/strata/jobs"
)

// CheckRun turns a press of a check run's button (or "Re-run") into the
// command it stands for, so a button does exactly what the comment does.
type CheckRun struct{ Base }

func (h *CheckRun) Handles() []string { return []string{"check_run"} }

func (h *CheckRun) Handle(ctx context.Context, eventType, deliveryID string, payload []byte) error {
	var event github.CheckRunEvent
	if err := decode("check_run", payload, &event); err != nil {
		return err
	}
	run := event.GetCheckRun()
	var cmd string
	switch event.GetAction() {
	case "requested_action":
		cmd = checks.ButtonCommand(run.GetName(), event.GetRequestedAction().Identifier)
	case "rerequested":
		cmd = checks.RerunCommand(run.GetName())
	}
	if cmd == "" || h.isBot(event.GetSender()) {
		return nil
	}
	pr := prOfCheck(run)
	if pr == 0 {
		return nil // not a check Strata made for a PR
	}
	ctx, _ = githubapp.PreparePRContext(ctx, event.GetInstallation().GetID(), event.GetRepo(), pr)
	return h.enqueue(ctx, eventType, deliveryID, jobs.Command{
		Repo: repoOf(event.GetInstallation(), event.GetRepo()),
		PR:   pr,
		User: event.GetSender().GetLogin(),
		Body: cmd,
	})
}

// prOfCheck finds the PR a check belongs to: Strata writes it as the
// external id; GitHub's pull_requests list is empty for forks.
func prOfCheck(run *github.CheckRun) int {
	if pr := checks.PROf(run.GetExternalID()); pr != 0 {
		return pr
	}
	if len(run.PullRequests) > 0 {
		return run.PullRequests[0].GetNumber()
	}
	return 0
}

var _ githubapp.EventHandler = &CheckRun{}
