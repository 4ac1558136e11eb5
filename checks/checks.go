// Package checks names Strata's check runs and their buttons. The names are
// stable API (users make them required checks) and the buttons' identifiers
// come back in check_run webhooks, so both are defined here once, for the
// capabilities that create the checks and the handler that reads the
// presses.
package checks

import (
	"fmt"
	"strconv"
	"strings"
)

// Check name prefixes; the layer, sync or release name follows.
const (
	PlanPrefix     = "strata/plan: "
	ApplyPrefix    = "strata/apply: "
	LockPrefix     = "strata/lock: "
	HydratePrefix  = "strata/hydrate: "
	TakeoverPrefix = "strata/takeover: "
	HelmTestPrefix = "strata/helm-test: "
	DriftPrefix    = "strata/drift: "
	PolicyPrefix   = "strata/policy: "
)

// Applied is the check that says every layer with changes is applied.
const Applied = "strata/applied"

// Plan, Apply, Lock, Hydrate, Takeover and HelmTest name the check of one
// layer, sync or release.
func Plan(layer string) string       { return PlanPrefix + layer }
func Apply(layer string) string      { return ApplyPrefix + layer }
func Lock(layer string) string       { return LockPrefix + layer }
func Hydrate(sync string) string     { return HydratePrefix + sync }
func Takeover(sync string) string    { return TakeoverPrefix + sync }
func HelmTest(release string) string { return HelmTestPrefix + release }

// Drift names the check a drift run of a layer leaves on the default
// branch's head.
func Drift(layer string) string { return DriftPrefix + layer }

// Policy names the check of a layer's policy sets over its last plan, on
// the PR head.
func Policy(layer string) string { return PolicyPrefix + layer }

// Button identifiers (at most 20 characters: GitHub's limit).
const (
	ButtonApply    = "apply"
	ButtonPlan     = "plan"
	ButtonUnlock   = "unlock"
	ButtonRelease  = "release"
	ButtonHelmTest = "helm-test"
)

// buttons maps a check name prefix and a button identifier to the command
// the button stands for: a button does exactly what the comment does.
var buttons = map[string]map[string]string{
	PlanPrefix:     {ButtonApply: "/apply", ButtonPlan: "/plan", ButtonUnlock: "/unlock"},
	ApplyPrefix:    {ButtonPlan: "/plan"},
	LockPrefix:     {ButtonUnlock: "/unlock"},
	TakeoverPrefix: {ButtonRelease: "/release"},
	HelmTestPrefix: {ButtonHelmTest: "/helm-test"},
}

// rerun is what GitHub's own "Re-run" does on each of Strata's checks.
var rerun = map[string]string{
	PlanPrefix:     "/plan",
	HelmTestPrefix: "/helm-test",
}

// ButtonCommand is the command line a press of button on the check called
// name stands for, or "" when the button is not one of Strata's.
func ButtonCommand(name, button string) string {
	for prefix, ids := range buttons {
		if target, ok := strings.CutPrefix(name, prefix); ok {
			if c, ok := ids[button]; ok {
				return c + " " + target
			}
		}
	}
	return ""
}

// RerunCommand is the command line GitHub's Re-run of the check called name
// stands for, or "" when Re-run does nothing there.
func RerunCommand(name string) string {
	for prefix, c := range rerun {
		if target, ok := strings.CutPrefix(name, prefix); ok {
			return c + " " + target
		}
	}
	return ""
}

// ExternalID is the external id of every check Strata creates on a PR: the
// check_run webhook of a button press names the PR only through it (GitHub's
// pull_requests list is empty for forks).
func ExternalID(pr int) string { return fmt.Sprintf("pr:%d", pr) }

// PROf reads the PR number back from an external id, 0 when it names none.
func PROf(externalID string) int {
	n, ok := strings.CutPrefix(externalID, "pr:")
	if !ok {
		return 0
	}
	i, err := strconv.Atoi(n)
	if err != nil || i < 0 {
		return 0
	}
	return i
}
