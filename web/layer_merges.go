package web

import (
	"context"
	"strings"
	"time"
)

// layerMerges is how many post-merge applies the layer page shows.
const layerMerges = 20

// mergeView is a post-merge apply of the layer (auto_apply: on_merge): the
// merged PR, its merge commit, and how the apply ended.
type mergeView struct {
	PR       int
	PRURL    string
	MergeSHA string
	MergedAt time.Time
	State    string
	// Class is the state's style; Detail the first line of what it found
	// (the whole is on the check and the PR's comment).
	Class, Detail string
}

// mergesOf reads the layer's latest post-merge applies.
func (u *UI) mergesOf(ctx context.Context, repo Repo, layer string) ([]mergeView, error) {
	rows, err := u.opts.Deps.Store.MergeAppliesOfLayer(ctx, repo.FullName, layer, layerMerges)
	if err != nil {
		return nil, err
	}
	out := make([]mergeView, 0, len(rows))
	for _, m := range rows {
		detail, _, _ := strings.Cut(m.Detail, "\n")
		out = append(out, mergeView{PR: m.PR, PRURL: u.opts.Deps.PRURL(repo.FullName, m.PR), MergeSHA: m.MergeSHA, MergedAt: m.MergedAt,
			State: m.State, Class: mergeClass(m.State), Detail: detail})
	}
	return out, nil
}

// mergeClass is the style of a post-merge apply's state (layers'
// mergeState names).
func mergeClass(state string) string {
	switch state {
	case "applied", "no changes":
		return "success"
	case "queued", "running":
		return "running"
	case "skipped":
		return "cancelled"
	}
	return "failure"
}
