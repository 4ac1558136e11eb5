package layers

import (
	"testing"
	"time"

	"strata.dev/strata/store"
)

// The post-merge apply of #5 (row 50, merged at t) waits for the merges in
// its history, recorded or not yet, and for nothing else.
func TestMergeTurn(t *testing.T) {
	t0 := time.UnixMilli(1_700_000_000_000)
	me := &store.MergeApply{ID: 50, PR: 5, MergeSHA: "m5", MergedAt: t0}
	row := func(id int64, pr int, at time.Time) *store.MergeApply {
		return &store.MergeApply{ID: id, PR: pr, MergeSHA: "m", MergedAt: at}
	}
	cases := []struct {
		name   string
		others []otherMerge
		want   int // the PR waited for, 0 to go
	}{
		{"nothing else", nil, 0},
		{"an apply in its history, recorded after it", []otherMerge{{PR: 4, Row: row(60, 4, t0), Status: "ahead"}}, 4},
		{"an apply merged later, recorded first", []otherMerge{{PR: 6, Row: row(40, 6, t0), Status: "behind"}}, 0},
		{"merged_at says later, Git says before", []otherMerge{{PR: 4, Row: row(40, 4, t0.Add(time.Second)), Status: "ahead"}}, 4},
		{"merged_at says before, Git says later", []otherMerge{{PR: 6, Row: row(40, 6, t0.Add(-time.Second)), Status: "behind"}}, 0},
		{"a close job not ended, in its history", []otherMerge{{PR: 4, Status: "ahead"}}, 4},
		{"a close job not ended, merged later", []otherMerge{{PR: 6, Status: "behind"}}, 0},
		{"a close job off its history (a rewritten branch)", []otherMerge{{PR: 4, Status: "diverged"}}, 0},
		{"a close job the comparison failed for", []otherMerge{{PR: 4}}, 4},
		{"its own PR's close job", []otherMerge{{PR: 5, Status: ""}}, 0},
		{"unordered by Git, merged earlier", []otherMerge{{PR: 4, Row: row(60, 4, t0.Add(-time.Second)), Status: "diverged"}}, 4},
		{"unordered by Git, merged later", []otherMerge{{PR: 6, Row: row(40, 6, t0.Add(time.Second))}}, 0},
		{"unordered by Git, same second, lower id", []otherMerge{{PR: 4, Row: row(49, 4, t0)}}, 4},
		{"unordered by Git, same second, higher id", []otherMerge{{PR: 6, Row: row(51, 6, t0), Status: "identical"}}, 0},
		{"later ones, then one before", []otherMerge{{PR: 6, Status: "behind"}, {PR: 7, Row: row(40, 7, t0), Status: "behind"},
			{PR: 3, Row: row(70, 3, t0), Status: "ahead"}}, 3},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := 0
			if o := mergeTurn(me, c.others); o != nil {
				got = o.PR
			}
			if got != c.want {
				t.Fatalf("waits for #%d, want #%d", got, c.want)
			}
		})
	}
}
