package words_test

import (
	"math"
	"testing"
	"time"

	"strata.dev/strata/command"
	"strata.dev/strata/words"
)

// A duration Strata writes in a reply can be typed into the next /takeover.
func TestDurationReadsBack(t *testing.T) {
	for _, d := range []time.Duration{time.Minute, 90 * time.Second, 2 * time.Hour, 90 * time.Minute, 36 * time.Hour, 12 * time.Hour, 45 * time.Second,
		1_000_000 * time.Hour, time.Duration(math.MaxInt64).Truncate(time.Second)} {
		got, err := command.ParseDuration(words.Duration(d))
		if err != nil || got != d {
			t.Errorf("ParseDuration(%q) = %v, %v; want %v", words.Duration(d), got, err, d)
		}
	}
}
