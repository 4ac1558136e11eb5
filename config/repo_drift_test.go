package config

import (
	"strings"
	"testing"
	"time"
)

func TestParseDriftSchedule(t *testing.T) {
	from := time.Date(2026, 3, 1, 10, 30, 0, 0, time.UTC)
	for _, tc := range []struct {
		schedule string
		next     time.Time
		err      string
	}{
		{schedule: "every 6h", next: from.Add(6 * time.Hour)},
		{schedule: "@every 30m", next: from.Add(30 * time.Minute)},
		{schedule: "@daily", next: time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)},
		{schedule: "0 */6 * * *", next: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)},
		{schedule: "every 1m", err: "at most every 10m"},
		{schedule: "* * * * *", err: "at most every 10m"},
		{schedule: "every day", err: `want "every 6h"`},
		{schedule: "0 3 * *", err: `want "every 6h"`},
	} {
		t.Run(tc.schedule, func(t *testing.T) {
			d, err := ParseDriftSchedule(tc.schedule)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want one saying %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := d.Next(from); !got.Equal(tc.next) || !d.On() {
				t.Errorf("Next = %s (on %v), want %s", got, d.On(), tc.next)
			}
		})
	}
}

// The repository's drift applies to layers that say nothing; a layer's own
// setting wins, and a bad schedule is reported on its line.
func TestParseRepoDrift(t *testing.T) {
	r, err := ParseRepo(RepoFile, []byte(`version: 1
layers:
  - dir: a
  - dir: b
    drift: {schedule: "@daily"}
  - dir: c
    drift: {enabled: false}
drift:
  schedule: every 6h
`))
	if err != nil {
		t.Fatal(err)
	}
	got := []string{}
	for _, l := range r.Layers {
		s := "off"
		if l.Drift.On() {
			s = l.Drift.Schedule
		}
		got = append(got, l.Name+"="+s)
	}
	if strings.Join(got, " ") != "a=every 6h b=@daily c=off" {
		t.Errorf("drift per layer = %v", got)
	}

	_, err = ParseRepo(RepoFile, []byte("version: 1\nlayers:\n  - dir: a\n    drift: {schedule: \"every 1m\"}\n  - dir: b\n    drift: {}\n"))
	if err == nil || !strings.Contains(err.Error(), ".strata.yaml:4:") || !strings.Contains(err.Error(), "at most every 10m") ||
		!strings.Contains(err.Error(), ".strata.yaml:6:") || !strings.Contains(err.Error(), "needs a schedule") {
		t.Errorf("bad drift err = %v", err)
	}
}
