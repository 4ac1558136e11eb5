package apptest

import (
	"encoding/json"
	"io"
	"sort"
	"sync"

	"github.com/rs/zerolog"
)

// serverLog is the test server's log: warnings and errors go to the test's
// output, and the slots runs took and let go (worker.HoldSlot's debug
// lines) are kept, so tests can show that two runs of one layer or release
// never overlapped, without those lines in the runs' own logs.
type serverLog struct {
	test io.Writer

	mu    sync.Mutex
	slots map[string]map[int64]*[2]int64 // slot kind -> run -> [taken, released] in Unix ms
}

var _ zerolog.LevelWriter = (*serverLog)(nil)

func newServerLog(test io.Writer) *serverLog {
	return &serverLog{test: test, slots: map[string]map[int64]*[2]int64{}}
}

func (l *serverLog) Write(p []byte) (int, error) { return l.WriteLevel(zerolog.NoLevel, p) }

func (l *serverLog) WriteLevel(level zerolog.Level, p []byte) (int, error) {
	if level >= zerolog.WarnLevel {
		return l.test.Write(p)
	}
	if level != zerolog.DebugLevel {
		return len(p), nil
	}
	var line struct {
		Message string `json:"message"`
		Slot    string `json:"slot"`
		Run     int64  `json:"run"`
		AtMS    int64  `json:"at_ms"`
	}
	if json.Unmarshal(p, &line) != nil || line.Slot == "" {
		return len(p), nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	runs := l.slots[line.Slot]
	if runs == nil {
		runs = map[int64]*[2]int64{}
		l.slots[line.Slot] = runs
	}
	span := runs[line.Run]
	if span == nil {
		span = &[2]int64{}
		runs[line.Run] = span
	}
	switch line.Message {
	case "slot taken":
		span[0] = line.AtMS
	case "slot released":
		span[1] = line.AtMS
	}
	return len(p), nil
}

// SlotSpans says when each run of this server held a slot of what
// ("layer", "release"): [taken, released] in Unix milliseconds, in the
// order the runs took them. A run that never let go (its server lost the
// database, or died) has released 0.
func (e *Env) SlotSpans(what string) [][2]int64 {
	e.log.mu.Lock()
	defer e.log.mu.Unlock()
	var spans [][2]int64
	for _, s := range e.log.slots[what] {
		if s[0] != 0 {
			spans = append(spans, *s)
		}
	}
	sort.Slice(spans, func(i, j int) bool { return spans[i][0] < spans[j][0] })
	return spans
}
