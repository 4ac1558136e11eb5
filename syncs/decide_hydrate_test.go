package syncs

import (
	"errors"
	"testing"
	"time"

	"strata.dev/strata/engine/hydrate"
	"strata.dev/strata/jobs"
	"strata.dev/strata/store"
)

// TestHydrateOutcome: what a hydration's check says and what the PR whose
// takeover ended is told, for each fact that ends a hydration.
func TestHydrateOutcome(t *testing.T) {
	push := jobs.SyncHydrate{Target: "dev", HeadSHA: "0123456789abcdef", Reason: jobs.HydratePush,
		Sync: jobs.SyncSpec{Name: "dev", DestRepo: "acme/infra", DestBranch: "hydrated", HydrateTo: "staging"}}
	release := push
	release.Reason, release.PR, release.Note = jobs.HydrateRelease, 7, "@alice released it"
	held := &store.Takeover{Repo: "acme/app", Sync: "dev", PR: 9, Holder: "bob", ExpiresAt: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	warn := &validated{Conclusion: "neutral", Title: "1 invalid object", Text: "**Validation:** 1 object of 2 invalid.\n\n"}
	valid := &validated{Conclusion: "success", Text: "**Validation:** 2 objects valid.\n\n"}
	block := &validated{Block: true, Conclusion: "failure", Title: "1 invalid object", Text: "**Validation failed:** 1 object of 2 invalid.\n\n"}
	boom := errors.New("GitHub said 502")
	built := &hydrate.Error{Sync: "dev", Source: "deploy/dev", Err: errors.New("missing kustomization")}
	for _, tc := range []struct {
		name string
		job  jobs.SyncHydrate
		h    hydration
		want hydrateOutcome
	}{
		{"taken over: paused", push, hydration{Takeover: held, TakeoverURL: "https://github.test/acme/app/pull/9"},
			hydrateOutcome{Conclusion: "neutral", Title: "Paused by #9 until 2026-01-02 03:04:05 UTC",
				Summary: "[#9](https://github.test/acme/app/pull/9) took `dev` over (@bob) until 2026-01-02 03:04:05 UTC: pushes to the default branch do not hydrate it until the takeover " +
					"ends with `/release dev`, the Release button, the pull request closing, or expiry. Strata then hydrates the default branch's head."}},
		{"taken over again before the hand-back: the PR is told", release, hydration{Takeover: held, TakeoverURL: "https://github.test/acme/app/pull/9"},
			hydrateOutcome{Conclusion: "neutral", Title: "Paused by #9 until 2026-01-02 03:04:05 UTC",
				Summary: "[#9](https://github.test/acme/app/pull/9) took `dev` over (@bob) until 2026-01-02 03:04:05 UTC: pushes to the default branch do not hydrate it until the takeover " +
					"ends with `/release dev`, the Release button, the pull request closing, or expiry. Strata then hydrates the default branch's head.",
				Tell: "but #9 took it over before Strata rehydrated it from the default branch; the default branch's head is hydrated into it when that takeover ends."}},
		{"build failed on a release: recorded, told", release, hydration{Build: built},
			hydrateOutcome{Conclusion: "failure", Title: "kustomize build failed",
				Summary:      "`dev` could not be hydrated at 0123456; nothing was committed.\n\n```\nhydrate sync \"dev\" (deploy/dev): missing kustomization\n```\n",
				RecordFailed: true,
				Tell:         "but hydrating `hydrated` at 0123456 failed; nothing was committed:\n\n```\nhydrate sync \"dev\" (deploy/dev): missing kustomization\n```\n"}},
		{"an error with attempts left: retried, the check stays", release, hydration{Err: boom, Valid: warn},
			hydrateOutcome{Err: boom}},
		{"an error before validation on the last attempt: the check fails", release, hydration{Err: boom, LastAttempt: true},
			hydrateOutcome{Conclusion: "failure", Title: "Hydration failed", Summary: "Strata could not hydrate this sync:\n\n```\nGitHub said 502\n```\n", Err: boom}},
		{"an error after validation on the last attempt: the validation follows", push, hydration{Err: boom, LastAttempt: true, Valid: warn},
			hydrateOutcome{Conclusion: "failure", Title: "Hydration failed",
				Summary: "Strata could not hydrate this sync:\n\n```\nGitHub said 502\n```\n\n**Validation:** 1 object of 2 invalid.\n\n", Err: boom}},
		{"validation blocks: recorded, its text alone, the PR not told", release, hydration{Valid: block},
			hydrateOutcome{Conclusion: "failure", Title: "1 invalid object: not hydrated", Summary: "**Validation failed:** 1 object of 2 invalid.\n\n", RecordFailed: true}},
		{"no branch to promote into", release, hydration{Valid: valid, NoBranch: true},
			hydrateOutcome{Conclusion: "failure", Title: "No branch to promote into",
				Summary: "`dev` hydrates into `staging` and is promoted into `hydrated` by pull request, but `acme/infra` has no branch `hydrated` to start `staging` from " +
					"or to promote into; nothing was committed. Create `hydrated` (an empty commit will do), then push again.\n\n**Validation:** 2 objects valid.\n\n"}},
		{"the guard skipped it on a release: told without the validation", release, hydration{Valid: warn, Skipped: "#9 took it over until 2026-01-02 03:04:05 UTC"},
			hydrateOutcome{Conclusion: "neutral", Title: "Not hydrated",
				Summary: "`dev` was not hydrated from 0123456: #9 took it over until 2026-01-02 03:04:05 UTC.\n\n**Validation:** 1 object of 2 invalid.\n\n",
				Tell:    "but `dev` was not hydrated from 0123456: #9 took it over until 2026-01-02 03:04:05 UTC."}},
		{"hydrated on a push: success, nobody told", push, hydration{Valid: valid, Title: "2 resources, 1 file changed", Summary: "Hydrated.\n"},
			hydrateOutcome{Conclusion: "success", Title: "2 resources, 1 file changed", Summary: "Hydrated.\n\n**Validation:** 2 objects valid.\n\n"}},
		{"hydrated on a release with invalid objects: neutral, the note first, told", release, hydration{Valid: warn, Title: "2 resources, 1 file changed", Summary: "Hydrated.\n"},
			hydrateOutcome{Conclusion: "neutral", Title: "2 resources, 1 file changed; 1 invalid object",
				Summary: "@alice released it\n\nHydrated.\n\n**Validation:** 1 object of 2 invalid.\n\n",
				Tell:    "and Strata rehydrated it from the default branch:\n\n@alice released it\n\nHydrated.\n"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := hydrateOutcomeOf(tc.job, tc.h); got != tc.want {
				t.Errorf("got\n%#v\nwant\n%#v", got, tc.want)
			}
		})
	}
}
