package helm

import (
	"sync"
	"time"

	"helm.sh/helm/v3/pkg/release"
	"helm.sh/helm/v3/pkg/storage/driver"
)

// Write is one release record written to Helm's storage, as the storage
// driver saw it. SDK actions may return an error after (or without) writing,
// so the report is built from these rather than from what the actions return.
type Write struct {
	Op          string    `json:"op"` // create, update or delete
	Release     string    `json:"release"`
	Revision    int       `json:"revision"`
	Status      string    `json:"status"`
	Description string    `json:"description,omitempty"`
	At          time.Time `json:"at"`
	// Err is set when the driver refused the write; nothing was written then.
	Err string `json:"err,omitempty"`
}

// observer wraps a Helm storage driver and records every write, in the
// manner of helm-controller's storage observer. Reads pass through.
type observer struct {
	driver.Driver
	now func() time.Time
	// created, when set, is called after the first revision is created:
	// the install or upgrade has rendered the chart by then.
	created func()

	mu     sync.Mutex
	writes []Write
}

func newObserver(d driver.Driver) *observer {
	return &observer{Driver: d, now: time.Now}
}

func (o *observer) Name() string { return "strata-observer(" + o.Driver.Name() + ")" }

func (o *observer) Create(key string, rls *release.Release) error {
	err := o.Driver.Create(key, rls)
	o.record("create", rls, err)
	if o.created != nil {
		o.created()
		o.created = nil
	}
	return err
}

func (o *observer) Update(key string, rls *release.Release) error {
	err := o.Driver.Update(key, rls)
	o.record("update", rls, err)
	return err
}

func (o *observer) Delete(key string) (*release.Release, error) {
	rls, err := o.Driver.Delete(key)
	if rls == nil {
		rls = &release.Release{Name: key}
	}
	o.record("delete", rls, err)
	return rls, err
}

func (o *observer) record(op string, rls *release.Release, err error) {
	w := Write{Op: op, Release: rls.Name, Revision: rls.Version, At: o.now()}
	if rls.Info != nil {
		w.Status = rls.Info.Status.String()
		w.Description = rls.Info.Description
	}
	if op == "delete" {
		w.Status = "deleted"
	}
	if err != nil {
		w.Err = err.Error()
	}
	o.mu.Lock()
	o.writes = append(o.writes, w)
	o.mu.Unlock()
}

// Writes returns a copy of the writes recorded so far, in order.
func (o *observer) Writes() []Write {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]Write(nil), o.writes...)
}

// last returns the revision and status that storage holds last for the
// release, judged by the successful writes: the highest revision written,
// with the status of its latest write.
func lastWritten(writes []Write) (revision int, status string) {
	for _, w := range writes {
		if w.Err != "" {
			continue
		}
		if w.Revision >= revision {
			revision, status = w.Revision, w.Status
		}
	}
	return revision, status
}
