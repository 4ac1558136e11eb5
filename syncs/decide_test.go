package syncs

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"strata.dev/strata/command"
	"strata.dev/strata/config"
	"strata.dev/strata/jobs"
	"strata.dev/strata/pull"
	"strata.dev/strata/pull/pulltest"
	"strata.dev/strata/store"
)

var (
	dev = config.Sync{Name: "dev", Source: "deploy/overlays/dev", Dest: config.Dest{Branch: "hydrated", Path: "dev"},
		Takeover: config.Takeover{Default: 2 * time.Hour, Max: 12 * time.Hour}}
	qa = config.Sync{Name: "qa", Source: "deploy/overlays/qa", Dest: config.Dest{Branch: "hydrated", Path: "qa"},
		Takeover: config.Takeover{Default: time.Hour, Max: 4 * time.Hour}}
)

// /takeover: an open same-repository PR, one sync, a duration within the
// sync's bounds; each fact that refuses it.
func proposed(s config.Sync) config.Sync {
	s.Proposed = true
	return s
}

func promoted(s config.Sync) config.Sync {
	s.Dest.HydrateTo = "staging/" + s.Name
	return s
}

func TestDecideTakeover(t *testing.T) {
	for _, tc := range []struct {
		name  string
		pr    pulltest.Context
		syncs []config.Sync
		cmd   command.Takeover
		// want: the sync taken and for how long (capped or not), or a part
		// of the refusal.
		sync     string
		duration time.Duration
		capped   string // the note, "" when not capped
		refused  string
	}{
		{name: "the only sync, its default duration", syncs: []config.Sync{dev}, sync: "dev", duration: 2 * time.Hour},
		{name: "named, for the duration asked", syncs: []config.Sync{dev, qa}, cmd: command.Takeover{Sync: "qa", Duration: 30 * time.Minute},
			sync: "qa", duration: 30 * time.Minute},
		{name: "longer than the maximum: capped", syncs: []config.Sync{dev}, cmd: command.Takeover{Duration: 30 * time.Hour},
			sync: "dev", duration: 12 * time.Hour, capped: " (capped at the sync's maximum, 12h)"},
		{name: "exactly the maximum: not capped", syncs: []config.Sync{dev}, cmd: command.Takeover{Duration: 12 * time.Hour},
			sync: "dev", duration: 12 * time.Hour},
		{name: "the named sync's own maximum", syncs: []config.Sync{dev, qa}, cmd: command.Takeover{Sync: "qa", Duration: 6 * time.Hour},
			sync: "qa", duration: 4 * time.Hour, capped: " (capped at the sync's maximum, 4h)"},
		{name: "closed PR", pr: pulltest.Context{Closed: true}, syncs: []config.Sync{dev}, refused: "this pull request is closed"},
		{name: "fork", pr: pulltest.Context{HeadRepoValue: "mallory/infra"}, syncs: []config.Sync{dev}, refused: "comes from a fork"},
		{name: "closed fork: closed first", pr: pulltest.Context{Closed: true, HeadRepoValue: "mallory/infra"}, syncs: []config.Sync{dev},
			refused: "closed"},
		{name: "no sync in the repo", refused: "this repository has no sync"},
		{name: "several syncs, none named", syncs: []config.Sync{dev, qa}, refused: "several syncs; name one: `dev`, `qa`"},
		{name: "unknown sync", syncs: []config.Sync{dev, qa}, cmd: command.Takeover{Sync: "prod"}, refused: "no sync `prod`"},
		{name: "a sync only the PR defines", syncs: []config.Sync{proposed(qa)}, refused: "not on the default branch"},
		{name: "a sync promoted by pull request", syncs: []config.Sync{promoted(dev)},
			refused: "`dev` is promoted by pull request: it hydrates into `staging/dev`, and `hydrated` changes only when its promotion pull request merges"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := decideTakeover(&tc.pr, tc.syncs, tc.cmd)
			if tc.refused != "" {
				if !strings.Contains(got.Refuse, tc.refused) {
					t.Fatalf("refusal = %q, want one with %q", got.Refuse, tc.refused)
				}
				return
			}
			if got.Refuse != "" || got.Sync.Name != tc.sync || got.Duration != tc.duration {
				t.Fatalf("got %q for %s (refused %q); want %q for %s", got.Sync.Name, got.Duration, got.Refuse, tc.sync, tc.duration)
			}
			if got.Capped != tc.capped {
				t.Errorf("capped note = %q, want %q", got.Capped, tc.capped)
			}
		})
	}
}

// PR #2 asks for dev while #1 holds it: the refusal names #1, its holder
// and the end of its takeover.
func TestTakenByNamesTheHolder(t *testing.T) {
	until := time.Date(2030, 1, 2, 15, 4, 5, 0, time.UTC)
	got := takenBy("dev", &store.Takeover{Repo: "acme/infra", Sync: "dev", PR: 1, Holder: "alice", ExpiresAt: until},
		"https://github.example/acme/infra/pull/1")
	if got.Title != "Taken over by #1" {
		t.Errorf("title = %q", got.Title)
	}
	for _, want := range []string{"[#1](https://github.example/acme/infra/pull/1)", "@alice", "2030-01-02 15:04:05 UTC", "Nothing was hydrated"} {
		if !strings.Contains(got.Summary, want) {
			t.Errorf("summary %q lacks %q", got.Summary, want)
		}
	}
	if !strings.Contains(got.Reason, "taken over by #1 (@alice) until 2030-01-02 15:04:05 UTC") {
		t.Errorf("reason = %q", got.Reason)
	}
}

// /release: the sync named or the PR's only one; a retry that finished the
// ending just now says nothing more.
func TestDecideRelease(t *testing.T) {
	held := func(syncs ...string) []*store.Takeover {
		var out []*store.Takeover
		for _, s := range syncs {
			out = append(out, &store.Takeover{Repo: "acme/infra", Sync: s, PR: 7})
		}
		return out
	}
	for _, tc := range []struct {
		name       string
		named      string
		held, done []*store.Takeover
		// want: the sync released, or a part of the reply; neither for a
		// silent retry.
		release string
		reply   string
	}{
		{name: "the only one held", held: held("dev"), release: "dev"},
		{name: "named, among several", named: "qa", held: held("dev", "qa"), release: "qa"},
		{name: "none held", reply: "holds no takeover to release"},
		{name: "named, none held", named: "dev", reply: "holds no takeover to release"},
		{name: "several held, none named", held: held("dev", "qa"), reply: "holds several syncs; name one: `/release SYNC`"},
		{name: "named but not held", named: "qa", held: held("dev"), reply: "does not hold `qa`"},
		{name: "a retry: given back just now", done: held("dev")},
		{name: "a retry naming it: given back just now", named: "dev", done: held("dev"), held: held("qa")},
		{name: "a retry, another one still held: released", done: held("dev"), held: held("qa"), release: "qa"},
		{name: "a retry, several still held", done: held("dev"), held: held("qa", "prod"), reply: "holds several syncs"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := decideRelease(tc.named, tc.held, tc.done)
			gotSync := ""
			if got.Release != nil {
				gotSync = got.Release.Sync
			}
			if gotSync != tc.release || (tc.reply == "") != (got.Reply == "") || !strings.Contains(got.Reply, tc.reply) {
				t.Fatalf("got release %q, reply %q; want release %q, reply with %q", gotSync, got.Reply, tc.release, tc.reply)
			}
		})
	}
}

// Which files a push changed, and whether that can be told.
func TestPushChanges(t *testing.T) {
	const before, after = "1111111111111111111111111111111111111111", "2222222222222222222222222222222222222222"
	repo := &pulltest.Context{Comparisons: map[string]*pull.Comparison{
		before + "..." + after:   {Status: "ahead", Files: []string{"deploy/base/a.yaml"}},
		"f0rced" + "..." + after: {Status: "diverged", Files: []string{"x"}},
	}}
	for _, tc := range []struct {
		name  string
		ev    jobs.Push
		files []string
		known bool
	}{
		{name: "named by the payload", ev: jobs.Push{Before: before, After: after, Changed: []string{"a", "b"}}, files: []string{"a", "b"}, known: true},
		{name: "compared", ev: jobs.Push{Before: before, After: after}, files: []string{"deploy/base/a.yaml"}, known: true},
		{name: "a new branch", ev: jobs.Push{Before: zeroSHA, After: after}},
		{name: "no before", ev: jobs.Push{After: after}},
		{name: "a force push", ev: jobs.Push{Before: "f0rced", After: after}},
		{name: "commits GitHub cannot relate", ev: jobs.Push{Before: "3333", After: after}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			files, known, err := pushChanges(context.Background(), repo, tc.ev)
			if err != nil || known != tc.known || !slices.Equal(files, tc.files) {
				t.Fatalf("got %v, known %v, %v; want %v, known %v", files, known, err, tc.files, tc.known)
			}
		})
	}
}

// A push leaves a sync alone only when its last hydration is known good,
// of the same config, and none of its inputs changed.
func TestUpToDate(t *testing.T) {
	spec := syncSpec(jobs.NewRepo(1, "acme", "infra"), dev)
	last := func(change func(*store.SyncHydration)) *store.SyncHydration {
		h := &store.SyncHydration{Spec: specJSON(spec), Inputs: []string{"deploy/overlays/dev/kustomization.yaml", "deploy/base/"}}
		if change != nil {
			change(h)
		}
		return h
	}
	other := dev
	other.Dest.Path = "dev2"
	for _, tc := range []struct {
		name    string
		last    *store.SyncHydration
		spec    jobs.SyncSpec
		changed []string
		known   bool
		want    bool
	}{
		{name: "no input changed", last: last(nil), spec: spec, changed: []string{"docs/README.md"}, known: true, want: true},
		{name: "an input changed", last: last(nil), spec: spec, changed: []string{"deploy/base/deployment.yaml"}, known: true},
		{name: "never hydrated", spec: spec, changed: []string{"docs/README.md"}, known: true},
		{name: "the push's files unknown", last: last(nil), spec: spec},
		{name: "the last build failed", last: last(func(h *store.SyncHydration) { h.FailedCommit = "abc" }), spec: spec,
			changed: []string{"docs/README.md"}, known: true},
		{name: "the sync's config changed", last: last(nil), spec: syncSpec(jobs.NewRepo(1, "acme", "infra"), other),
			changed: []string{"docs/README.md"}, known: true},
		{name: "no inputs recorded", last: last(func(h *store.SyncHydration) { h.Inputs = nil }), spec: spec,
			changed: []string{"docs/README.md"}, known: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := upToDate(tc.last, tc.spec, tc.changed, tc.known); got != tc.want {
				t.Fatalf("upToDate = %v, want %v", got, tc.want)
			}
		})
	}
}

// A sync may not write into its own source on the default branch.
func TestFeedsItself(t *testing.T) {
	push := jobs.Push{Repo: jobs.NewRepo(1, "acme", "infra"), DefaultBranch: "main"}
	spec := func(repo, branch, path, source string) jobs.SyncSpec {
		return jobs.SyncSpec{Name: "dev", Source: source, DestRepo: repo, DestBranch: branch, DestPath: path}
	}
	for _, tc := range []struct {
		name  string
		spec  jobs.SyncSpec
		feeds bool
	}{
		{name: "another branch", spec: spec("acme/infra", "hydrated", "dev", "deploy/overlays/dev")},
		{name: "another repo", spec: spec("acme/deploy", "main", ".", "deploy/overlays/dev")},
		{name: "beside its source", spec: spec("acme/infra", "main", "hydrated/dev", "deploy/overlays/dev")},
		{name: "a sibling with a common prefix", spec: spec("acme/infra", "main", "deploy/overlays/dev2", "deploy/overlays/dev")},
		{name: "the repo root", spec: spec("acme/infra", "main", ".", "deploy/overlays/dev"), feeds: true},
		{name: "its source", spec: spec("acme/infra", "main", "deploy/overlays/dev/", "deploy/overlays/dev"), feeds: true},
		{name: "under its source", spec: spec("acme/infra", "main", "deploy/overlays/dev/out", "deploy/overlays/dev"), feeds: true},
		{name: "above its source", spec: spec("acme/infra", "main", "deploy", "deploy/overlays/dev"), feeds: true},
		{name: "a source at the root", spec: spec("acme/infra", "main", "out", "."), feeds: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			why := feedsItself(push, tc.spec)
			if (why != "") != tc.feeds || (tc.feeds && !strings.Contains(why, "overlaps its source")) {
				t.Fatalf("feedsItself = %q, want feeds %v", why, tc.feeds)
			}
		})
	}
}

// A PR gets a preview of the syncs whose output its files can change.
func TestPreviewTouched(t *testing.T) {
	last := &store.SyncHydration{Inputs: []string{"deploy/base/kustomization.yaml", "deploy/base/", "deploy/overlays/dev/kustomization.yaml"}}
	for _, tc := range []struct {
		name  string
		last  *store.SyncHydration
		files []string
		want  bool
	}{
		{name: "an input of the last hydration", last: last, files: []string{"deploy/base/deployment.yaml"}, want: true},
		{name: "under the source, never hydrated", files: []string{"deploy/overlays/dev/replicas.yaml"}, want: true},
		{name: "the config", last: last, files: []string{config.RepoFile}, want: true},
		{name: "elsewhere", last: last, files: []string{"docs/README.md", "deploy/overlays/dev2/x.yaml"}},
		{name: "an unread file beside the inputs' directory", last: last, files: []string{"deploy/README.md"}},
		{name: "no files"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := previewTouched(dev, tc.last, tc.files); got != tc.want {
				t.Fatalf("previewTouched = %v, want %v", got, tc.want)
			}
		})
	}
}
