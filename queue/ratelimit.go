package queue

import (
	"encoding/json"
	"time"

	"github.com/riverqueue/river/rivertype"

	"strata.dev/strata/ghretry"
)

// maxLimitSnoozes bounds how often one job waits out GitHub's rate limit
// again: a primary limit resets within the hour, so twelve waits are half a
// day of an installation out of requests, long past when its author cares.
const maxLimitSnoozes = 12

// limitJitter bounds the random delay added after a reset, so the jobs that
// waited for the same installation's reset do not all spend its fresh
// requests in the same second.
const limitJitter = time.Minute

// limitSnooze is how long a job that failed only because GitHub's rate limit
// outlasts what its request could wait should sleep before it runs again,
// and whether it should. A limit is not the job's fault: failing it would
// spend one of its attempts on every request of an installation that ran
// out, and a burst of comments would be discarded after three tries within
// minutes, with no reply. So a job River would retry anyway is snoozed until
// the limit resets, which costs it no attempt. A job that runs once (an
// apply, a takeover) is never run again by this: its error stands.
func limitSnooze(err error, job *rivertype.JobRow, now time.Time) (time.Duration, bool) {
	at, limited := ghretry.RetryAt(err, now)
	if !limited || job.MaxAttempts <= 1 || snoozesOf(job) >= maxLimitSnoozes {
		return 0, false
	}
	wait := max(at.Sub(now), 0)
	return wait + ghretry.FullJitter(min(wait/10+time.Second, limitJitter)), true
}

// snoozesOf is how often River snoozed the job so far (it counts them in the
// job's metadata).
func snoozesOf(job *rivertype.JobRow) int {
	var m struct {
		Snoozes int `json:"snoozes"`
	}
	_ = json.Unmarshal(job.Metadata, &m)
	return m.Snoozes
}
