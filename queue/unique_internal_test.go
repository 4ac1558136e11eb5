package queue

import (
	"testing"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
)

type plainArgs struct{}

func (plainArgs) Kind() string { return "plain" }

type onceArgs struct{}

func (onceArgs) Kind() string { return "once" }

func (onceArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{UniqueOpts: river.UniqueOpts{ByArgs: true}}
}

// unique follows River: the insert's own UniqueOpts, or the arguments'
// when the insert's are empty. A unique job taken for a plain one would go
// through River's fast insert, which fails a batch on a duplicate.
func TestUniqueIsRiversChoice(t *testing.T) {
	byState := river.UniqueOpts{ByState: []rivertype.JobState{rivertype.JobStateAvailable, rivertype.JobStatePending, rivertype.JobStateRunning, rivertype.JobStateScheduled}}
	for _, c := range []struct {
		name string
		job  river.InsertManyParams
		want bool
	}{
		{"plain arguments", river.InsertManyParams{Args: plainArgs{}}, false},
		{"plain arguments, options without uniqueness", river.InsertManyParams{Args: plainArgs{}, InsertOpts: &river.InsertOpts{Queue: "runs"}}, false},
		{"unique arguments", river.InsertManyParams{Args: onceArgs{}}, true},
		{"unique arguments, options without uniqueness", river.InsertManyParams{Args: onceArgs{}, InsertOpts: &river.InsertOpts{Queue: "runs"}}, true},
		{"plain arguments, unique options", river.InsertManyParams{Args: plainArgs{}, InsertOpts: &river.InsertOpts{UniqueOpts: byState}}, true},
	} {
		if got := unique(c.job); got != c.want {
			t.Errorf("%s: unique = %v, want %v", c.name, got, c.want)
		}
	}
}
