// Package words is how counts and durations read in what Strata writes to
// people: comments, checks, run logs, the web UI, the CLI. One place, so
// "1 sync" and "2h" read the same everywhere.
package words

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Plural picks one or many by n.
func Plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// Count is n followed by the noun that agrees with it: "1 sync", "3 syncs".
func Count(n int, one, many string) string {
	return strconv.Itoa(n) + " " + Plural(n, one, many)
}

// Duration writes d as people do: "2h", "1h30m", "1d12h", "45s", "1.3s",
// "250ms", never Go's "2h0m0s". Units that are zero are left out. From a
// minute up it is exact to the second; what it writes, command.ParseDuration
// reads back (days included), so a duration shown in a reply can be typed
// into the next command.
func Duration(d time.Duration) string {
	if d < 0 {
		return "-" + Duration(-d)
	}
	switch {
	case d == 0:
		return "0s"
	case d < time.Second:
		return strconv.FormatInt(d.Round(time.Millisecond).Milliseconds(), 10) + "ms"
	case d < 10*time.Second:
		// One decimal: 1.3s says more than 1s about a short step.
		s := strconv.FormatFloat(d.Round(100*time.Millisecond).Seconds(), 'f', 1, 64)
		return strings.TrimSuffix(s, ".0") + "s"
	}
	d = d.Round(time.Second)
	var b strings.Builder
	for _, u := range []struct {
		size time.Duration
		name string
	}{{24 * time.Hour, "d"}, {time.Hour, "h"}, {time.Minute, "m"}, {time.Second, "s"}} {
		if n := d / u.size; n > 0 {
			fmt.Fprintf(&b, "%d%s", n, u.name)
			d -= n * u.size
		}
	}
	return b.String()
}
