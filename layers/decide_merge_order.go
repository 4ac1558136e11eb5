package layers

import "strata.dev/strata/store"

// Merge order (auto_apply: on_merge, docs/governance.md): the post-merge
// applies of a layer happen in the order their PRs merged, whatever the
// order their jobs run in.
//
// The truth of that order is Git's: A merged before B when A's merge commit
// is in the history of B's (GitHub's compare, base A, head B: "ahead").
// merged_at is not an order: GitHub gives it to the second, and a merge
// queue merges a whole group at the same instant.
//
// A merge's apply must also not overtake an earlier merge whose close job
// has not recorded its applies yet (its close reads GitHub before it knows
// which layers it applies). That job exists from the delivery of the
// close event (the handler enqueues it with the delivery), so the apply
// waits for every unfinished close job of a merge in its history: when that
// job ends, its rows are recorded (or it applies nothing), and the rows
// are ordered by ancestry in turn. Reading the close jobs before the rows
// leaves no gap: a close that ends between the two reads recorded its rows
// before it ended. What this cannot see is a merge whose close event GitHub
// has not delivered yet: its later merge then applies first, its plan at
// the merge commit holds the earlier merge's changes, and the equivalence
// check refuses it: nothing unreviewed is applied.

// otherMerge is another merge of the repository that the post-merge apply
// of a layer may have to wait for.
type otherMerge struct {
	PR       int
	MergeSHA string
	// Row is its post-merge apply of the layer, not ended; nil for a merge
	// whose close job has not ended: whether it applies the layer is not
	// known yet.
	Row *store.MergeApply
	// Status is GitHub's compare of its merge commit (base) with ours
	// (head): "ahead" (ours is ahead: it merged first), "behind",
	// "identical", "diverged", or "" when the comparison failed.
	Status string
}

// mergeTurn decides whether the post-merge apply row may go, or which
// merge it waits for first.
func mergeTurn(row *store.MergeApply, others []otherMerge) (waitFor *otherMerge) {
	for i := range others {
		o := &others[i]
		if o.PR == row.PR {
			continue
		}
		if mergedBefore(row, o) {
			return o
		}
	}
	return nil
}

// mergedBefore says whether o merged before row.
func mergedBefore(row *store.MergeApply, o *otherMerge) bool {
	switch {
	case o.Status == "ahead":
		return true
	case o.Status == "behind":
		return false
	case o.Row == nil:
		// A close job still running: in our history is known only from
		// the comparison, so an unknown one is waited for (the job ends);
		// one off our history (diverged: a rewritten branch) is not.
		return o.Status == ""
	default:
		// Two recorded applies Git cannot order (the comparison failed,
		// or a rewritten branch): merged_at, then the row's id, a total
		// order, so exactly one of them waits.
		if !o.Row.MergedAt.Equal(row.MergedAt) {
			return o.Row.MergedAt.Before(row.MergedAt)
		}
		return o.Row.ID < row.ID
	}
}
