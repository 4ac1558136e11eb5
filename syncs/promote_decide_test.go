package syncs

import (
	"strings"
	"testing"
)

func TestDecidePromotion(t *testing.T) {
	src := func(sha, subject string) promotedSource {
		return promotedSource{SHA: sha, URL: "https://github.com/acme/app/commit/" + sha, Subject: subject, Author: "Alice"}
	}
	a := src("aaaaaaa1111111111111111111111111111111111", "Bump api")
	b := src("bbbbbbb2222222222222222222222222222222222", "Fix `quotes`\nand lines")
	files := []promotedFile{{"dev/api.yaml", "modified"}, {"dev/new.yaml", "added"}, {"dev/old.yaml", "removed"}, {"dev/.strata-sync.yaml", "modified"}}
	base := promotionFacts{Sync: "dev", SourceRepo: "acme/app", Staging: "staging/dev", Branch: "env", Path: "dev",
		Sources: []promotedSource{a, b}, Files: files}
	body := "Promotes `dev` from `acme/app` into `env:dev`: merging this pull request is the promotion. Strata updates it with " +
		"each hydration into `staging/dev`, and opens a new one after it merges.\n\n" +
		"### Source commits\n\n2 commits, oldest first:\n\n" +
		"- [`aaaaaaa`](https://github.com/acme/app/commit/aaaaaaa1111111111111111111111111111111111) `Bump api` by `Alice`\n" +
		"- [`bbbbbbb`](https://github.com/acme/app/commit/bbbbbbb2222222222222222222222222222222222) ``Fix `quotes` and lines`` by `Alice`\n\n" +
		"### Changes\n\n**4 files**: 1 added, 2 changed, 1 removed.\n\n<details><summary>Files</summary>\n\n" +
		"- change `dev/api.yaml`\n- add `dev/new.yaml`\n- remove `dev/old.yaml`\n- change `dev/.strata-sync.yaml`\n\n</details>\n"
	with := func(f func(*promotionFacts)) promotionFacts {
		c := base
		f(&c)
		return c
	}
	for _, tc := range []struct {
		name  string
		facts promotionFacts
		want  promotion
	}{
		{name: "none open: open one", facts: base,
			want: promotion{Outcome: promoteOpen, Title: "Hydrate dev: aaaaaaa, bbbbbbb", Body: body}},
		{name: "one open that says less: update it", facts: with(func(f *promotionFacts) {
			f.Open = &openPromotion{Number: 9, Title: "Hydrate dev: aaaaaaa", Body: "old"}
		}), want: promotion{Outcome: promoteUpdate, Number: 9, Title: "Hydrate dev: aaaaaaa, bbbbbbb", Body: body}},
		{name: "one open that says it all: keep it", facts: with(func(f *promotionFacts) {
			f.Open = &openPromotion{Number: 9, Title: "Hydrate dev: aaaaaaa, bbbbbbb", Body: body}
		}), want: promotion{Outcome: promoteKeep, Number: 9, Title: "Hydrate dev: aaaaaaa, bbbbbbb", Body: body}},
		{name: "nothing left to promote, none open", facts: with(func(f *promotionFacts) { f.Files = nil }),
			want: promotion{Outcome: promoteNothing}},
		{name: "nothing left to promote, one open: left for people", facts: with(func(f *promotionFacts) {
			f.Files, f.Open = nil, &openPromotion{Number: 9}
		}), want: promotion{Outcome: promoteNothing}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := decidePromotion(tc.facts); got != tc.want {
				t.Errorf("got  %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

func TestPromotionTitle(t *testing.T) {
	var sources []promotedSource
	for _, c := range "abcdefg" {
		sources = append(sources, promotedSource{SHA: strings.Repeat(string(c), 40)})
	}
	for _, tc := range []struct {
		n    int
		want string
	}{
		{0, "Hydrate dev"},
		{1, "Hydrate dev: aaaaaaa"},
		{5, "Hydrate dev: aaaaaaa, bbbbbbb, ccccccc, ddddddd, eeeeeee"},
		{7, "Hydrate dev: aaaaaaa, bbbbbbb, ccccccc, ddddddd, eeeeeee and 2 more"},
	} {
		if got := promotionTitle("dev", sources[:tc.n]); got != tc.want {
			t.Errorf("%d sources: %q, want %q", tc.n, got, tc.want)
		}
	}
}

func TestPromotionBodyBounds(t *testing.T) {
	f := promotionFacts{Sync: "dev", SourceRepo: "acme/app", Staging: "s", Branch: "env", Path: "."}
	for i := range 25 {
		f.Sources = append(f.Sources, promotedSource{SHA: strings.Repeat("a", 39) + string(rune('a'+i)), Subject: strings.Repeat("x", 3000)})
	}
	for i := range 150 {
		f.Files = append(f.Files, promotedFile{Path: strings.Repeat("d/", 200) + strings.Repeat("f", i+1), Status: "added"})
	}
	body := promotionBody(f)
	if len(body) > 65535 {
		t.Fatalf("body is %d bytes, over GitHub's 65535", len(body))
	}
	for _, want := range []string{"25 commits, oldest first", "- and 5 more\n", "**150 files**: 150 added, 0 changed, 0 removed"} {
		if !strings.Contains(body, want) {
			t.Errorf("body lacks %q", want)
		}
	}
}

func TestCarriedSources(t *testing.T) {
	msg := func(sync, src string) string {
		return "Hydrate " + sync + "\n\nStrata-Source-Commit: " + src + "\nStrata-Sync: " + sync + "\nStrata-Source-Repo: acme/app\n"
	}
	for _, tc := range []struct {
		name     string
		commits  []stagingCommit
		promoted string
		want     string
	}{
		{name: "each hydration's source commit, oldest first", commits: []stagingCommit{{Message: msg("dev", "s1")}, {Message: msg("dev", "s2")}},
			want: "s1,s2"},
		{name: "another sync's and people's commits are not carried", commits: []stagingCommit{{Message: msg("qa", "q1")},
			{Message: "Fix by hand"}, {Message: msg("dev", "s2")}}, want: "s2"},
		{name: "a source hydrated twice (repin) counts once", commits: []stagingCommit{{Message: msg("dev", "s1")}, {Message: msg("dev", "s1")}},
			want: "s1"},
		{name: "after a squash merge: only those after the promoted one", promoted: "s2",
			commits: []stagingCommit{{Message: msg("dev", "s1")}, {Message: msg("dev", "s2")}, {Message: msg("dev", "s3")}}, want: "s3"},
		{name: "a forged trailer in the subject is not one", commits: []stagingCommit{
			{Message: "Strata-Source-Commit: evil\n\nStrata-Source-Commit: s1\nStrata-Sync: dev\n"}}, want: "s1"},
		{name: "trailers not in the last paragraph are not read", commits: []stagingCommit{
			{Message: "x\n\nStrata-Source-Commit: evil\nStrata-Sync: dev\n\nSigned-off-by: a"}}, want: ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := strings.Join(carriedSources(tc.commits, "dev", tc.promoted), ","); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}
