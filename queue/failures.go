package queue

import (
	"encoding/json"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
	"github.com/rs/zerolog"
)

// jobMeta is what a job works on, read from its arguments: every kind's
// arguments carry these fields when they apply.
type jobMeta struct {
	Repo    string `json:"repo"`
	PR      int    `json:"pr"`
	Target  string `json:"target"`
	HeadSHA string `json:"head_sha"`
}

func metaOf(job *rivertype.JobRow) jobMeta {
	var m jobMeta
	_ = json.Unmarshal(job.EncodedArgs, &m)
	return m
}

// logFailure says, once per failed attempt, which job failed and why: River
// records the error in the job row only, so without this a job that fails
// its last attempt and is discarded would leave nothing in the log. A panic,
// a timeout or arguments that do not decode end here too, though they never
// reach the job's own logger.
func (q *Queue) logFailure(ev *river.Event) {
	if ev.Kind != river.EventKindJobFailed || ev.Job == nil {
		return
	}
	job := ev.Job
	m := metaOf(job)
	errText := "unknown error"
	if n := len(job.Errors); n > 0 {
		errText = job.Errors[n-1].Error
	}
	var e *zerolog.Event
	msg := "job failed; it will be retried"
	if job.State == rivertype.JobStateDiscarded {
		e, msg = q.opts.Log.Error(), "job failed for the last time and was discarded"
	} else {
		e = q.opts.Log.Warn()
	}
	e = e.Str("kind", job.Kind).Int64("job", job.ID).Int("attempt", job.Attempt).Int("max_attempts", job.MaxAttempts).
		Str("repo", m.Repo).Int("pr", m.PR).Str("target", m.Target).Str("error", errText)
	if job.State != rivertype.JobStateDiscarded {
		e = e.Time("retry_at", job.ScheduledAt)
	}
	e.Msg(msg)
}
