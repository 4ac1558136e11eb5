package config

import (
	"fmt"
	"strings"
	"time"

	"github.com/robfig/cron/v3"
	"go.yaml.in/yaml/v3"
	"strata.dev/strata/words"
)

// Drift asks Strata to plan a layer's default branch on a schedule and
// report when the real world no longer matches it. It is read from the
// default branch only: a PR cannot turn it on, off, or change it.
type Drift struct {
	// Schedule is as written: "every 6h", "@daily" or cron ("0 */6 * * *").
	Schedule string
	// Enabled is false for a layer that turns off the repository's drift.
	Enabled bool
	every   cron.Schedule
}

// MinDriftInterval bounds how often a layer is planned for drift: each run
// is a full Terraform plan against the real providers.
const MinDriftInterval = 10 * time.Minute

// ParseDriftSchedule reads a drift schedule: "every DURATION" (or
// "@every DURATION"), a descriptor (@hourly, @daily, @weekly, @monthly) or
// a five-field cron expression, evaluated in UTC.
func ParseDriftSchedule(s string) (Drift, error) {
	spec := strings.TrimSpace(s)
	if rest, ok := strings.CutPrefix(spec, "every "); ok {
		spec = "@every " + strings.TrimSpace(rest)
	}
	sched, err := cron.ParseStandard(spec)
	if err != nil {
		return Drift{}, fmt.Errorf("schedule %q: want \"every 6h\", @daily or cron syntax (\"0 */6 * * *\"): %v", s, err)
	}
	// Two steps from a fixed instant show the shortest gap of simple
	// schedules; a cron expression firing every minute is refused here.
	t0 := time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)
	t1 := sched.Next(t0)
	if gap := sched.Next(t1).Sub(t1); gap < MinDriftInterval {
		return Drift{}, fmt.Errorf("schedule %q runs every %s: drift detection runs at most every %s", s, words.Duration(gap), words.Duration(MinDriftInterval))
	}
	return Drift{Schedule: s, Enabled: true, every: sched}, nil
}

// Next is when a run that was due at or before after is due again.
func (d *Drift) Next(after time.Time) time.Time {
	if d == nil || d.every == nil {
		return time.Time{}
	}
	return d.every.Next(after.UTC())
}

// On says whether drift detection runs with this setting.
func (d *Drift) On() bool { return d != nil && d.Enabled && d.every != nil }

// drift decodes `drift: {schedule: "every 6h"}`, or `drift: {enabled:
// false}` on a layer that opts out of the repository's schedule.
func (d *repoDecoder) drift(p **Drift) fieldFunc {
	return func(n *yaml.Node, what string) {
		var schedule string
		enabled := true
		d.fields(n, what, map[string]fieldFunc{
			"schedule": d.str(&schedule),
			"enabled":  d.boolean(&enabled),
		})
		if !enabled {
			*p = &Drift{}
			return
		}
		if schedule == "" {
			d.add(n.Line, "%s needs a schedule, e.g. schedule: \"every 6h\"", what)
			return
		}
		dr, err := ParseDriftSchedule(schedule)
		if err != nil {
			d.add(n.Line, "%s: %v", what, err)
			return
		}
		*p = &dr
	}
}

// inheritDrift gives each layer that says nothing of drift the
// repository's setting: a layer's own wins.
func inheritDrift(r *Repo) {
	for i := range r.Layers {
		if r.Layers[i].Drift == nil {
			r.Layers[i].Drift = r.Drift
		}
	}
}

func cloneDrift(d *Drift) *Drift {
	if d == nil {
		return nil
	}
	c := *d
	return &c
}
