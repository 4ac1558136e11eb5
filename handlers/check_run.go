package handlers

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/google/go-github/v60/github"
	"github.com/palantir/go-githubapp/githubapp"

	"strata.dev/strata/jobs"
)

// CheckRun turns a press of a check run's button (or "Re-run") into the
// command it stands for, so a button does exactly what the comment does.
type CheckRun struct{ Base }

func (h *CheckRun) Handles() []string { return []string{"check_run"} }

// buttons maps a check name prefix and a button identifier to a command.
var buttons = map[string]map[string]string{
	"strata/plan: ":      {"apply": "/apply", "plan": "/plan", "unlock": "/unlock"},
	"strata/apply: ":     {"plan": "/plan"},
	"strata/lock: ":      {"unlock": "/unlock"},
	"strata/takeover: ":  {"release": "/release"},
	"strata/helm-test: ": {"helm-test": "/helm-test"},
}

// rerun is what GitHub's "Re-run" does on each of Strata's checks.
var rerun = map[string]string{
	"strata/plan: ":      "/plan",
	"strata/helm-test: ": "/helm-test",
}

func (h *CheckRun) Handle(ctx context.Context, eventType, deliveryID string, payload []byte) error {
	var event github.CheckRunEvent
	if err := json.Unmarshal(payload, &event); err != nil {
		return fmt.Errorf("parse check_run payload: %w", err)
	}
	run := event.GetCheckRun()
	var cmd string
	for prefix, ids := range buttons {
		target, ok := strings.CutPrefix(run.GetName(), prefix)
		if !ok {
			continue
		}
		switch event.GetAction() {
		case "requested_action":
			if c, ok := ids[event.GetRequestedAction().Identifier]; ok {
				cmd = c + " " + target
			}
		case "rerequested":
			if c, ok := rerun[prefix]; ok {
				cmd = c + " " + target
			}
		}
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
		Repo:       repoOf(event.GetInstallation(), event.GetRepo()),
		PR:         pr,
		User:       event.GetSender().GetLogin(),
		Body:       cmd,
		CheckRunID: run.GetID(),
	})
}

// prOfCheck finds the PR a check belongs to: Strata writes it as the
// external id ("pr:42"); GitHub's pull_requests list is empty for forks.
func prOfCheck(run *github.CheckRun) int {
	if n, ok := strings.CutPrefix(run.GetExternalID(), "pr:"); ok {
		if i, err := strconv.Atoi(n); err == nil {
			return i
		}
	}
	if len(run.PullRequests) > 0 {
		return run.PullRequests[0].GetNumber()
	}
	return 0
}

var _ githubapp.EventHandler = &CheckRun{}
