package worker

import (
	"context"
	"fmt"

	"github.com/riverqueue/river"

	"strata.dev/strata/jobs"
	"strata.dev/strata/queue"
)

// Feature is one capability as the runtime sees it: the commands it owns,
// how it reacts to events, the jobs it runs, and how it recovers runs that a
// crash cut short. app builds each (layers.New, syncs.New, releases.New)
// and hands them to Register.
type Feature struct {
	Name string
	// Commands maps a command name ("plan") to what carries it out.
	Commands map[string]Command
	// OnPullRequest and OnPush react to events; each must be safe to run
	// twice, since a failure of any feature retries the whole event job.
	OnPullRequest PullRequestFunc
	OnPush        PushFunc
	// Interrupted reports, per job kind, a run with side effects that a
	// crash cut short; those kinds are never retried after a crash.
	Interrupted map[string]InterruptedFunc
	// Periodic are the scans the queue's leader enqueues on a schedule.
	Periodic []Periodic
	// AddWorkers adds the feature's River workers.
	AddWorkers func(*river.Workers)
}

// PullRequestFunc reacts to a PR event for one feature.
type PullRequestFunc func(ctx context.Context, ev jobs.PullRequest) error

// PushFunc reacts to a push to the default branch for one feature.
type PushFunc func(ctx context.Context, ev jobs.Push) error

// InterruptedFunc tells the user that a job with side effects was cut short
// by its process dying, and what to check.
type InterruptedFunc func(ctx context.Context, job queue.Interrupted) error

// Runtime dispatches commands and events to the features.
type Runtime struct {
	d           *Deps
	features    []Feature
	commands    map[string]Command
	interrupted map[string]InterruptedFunc
}

// New builds the runtime of features; two features owning one command or
// one interrupted kind is a wiring error.
func New(d *Deps, features ...Feature) (*Runtime, error) {
	r := &Runtime{d: d, features: features,
		commands: map[string]Command{"help": {Run: help}}, interrupted: map[string]InterruptedFunc{}}
	periodic := map[string]string{}
	for _, f := range features {
		for name, c := range f.Commands {
			if _, dup := r.commands[name]; dup {
				return nil, fmt.Errorf("command /%s is claimed twice (by %s)", name, f.Name)
			}
			r.commands[name] = c
		}
		for _, p := range f.Periodic {
			if owner, dup := periodic[p.ID]; dup {
				return nil, fmt.Errorf("periodic job %s is claimed twice (by %s and %s)", p.ID, owner, f.Name)
			}
			periodic[p.ID] = f.Name
		}
		for kind, i := range f.Interrupted {
			if _, dup := r.interrupted[kind]; dup {
				return nil, fmt.Errorf("interrupted jobs of kind %s are claimed twice (by %s)", kind, f.Name)
			}
			r.interrupted[kind] = i
		}
	}
	return r, nil
}

// AddWorkers adds the runtime's workers and every feature's.
func (r *Runtime) AddWorkers(w *river.Workers) {
	river.AddWorker(w, &CommandWorker{rt: r})
	river.AddWorker(w, &InterruptedWorker{rt: r})
	river.AddWorker(w, &PullRequestWorker{rt: r})
	river.AddWorker(w, &PushWorker{rt: r})
	for _, f := range r.features {
		if f.AddWorkers != nil {
			f.AddWorkers(w)
		}
	}
}

// Policies says how each job kind is recovered when its process dies: kinds
// with an interrupted report are never run again; the others are retried.
func (r *Runtime) Policies() map[string]queue.Policy {
	out := map[string]queue.Policy{}
	for kind := range r.interrupted {
		out[kind] = queue.Policy{Recovery: queue.Interrupt}
	}
	return out
}

// Periodic are every feature's scans, in the features' order.
func (r *Runtime) Periodic() []Periodic {
	var out []Periodic
	for _, f := range r.features {
		out = append(out, f.Periodic...)
	}
	return out
}

// PeriodicJobs are every feature's scans as River's periodic jobs.
func (r *Runtime) PeriodicJobs() []*river.PeriodicJob {
	var out []*river.PeriodicJob
	for _, p := range r.Periodic() {
		out = append(out, p.job())
	}
	return out
}
