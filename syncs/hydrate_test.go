package syncs

import (
	"testing"

	"strata.dev/strata/engine/hydrate"
	"strata.dev/strata/gitcommit"
	"strata.dev/strata/jobs"
)

// The attack: a PR taken over hydrates manifests whose kind, image and
// sync fields close a single-backtick span and go on as Markdown (an image,
// a link, a team mention). Each is quoted whole in the check's summary; the
// fuzz of markdown.Quote shows no such quote renders as anything but code.
func TestHydrateReportQuotesWhatThePRNames(t *testing.T) {
	const evil = "x` ![img](https://evil/x.png) @acme/admins `"
	spec := jobs.SyncSpec{Name: "dev", Source: "deploy/" + evil, DestRepo: "acme/infra", DestBranch: "hydrated", DestPath: "dev"}
	res := &hydrate.Result{Resources: 2, Kinds: []string{"ConfigMap", evil},
		Pinned: []hydrate.PinnedImage{{Name: "ghcr.io/acme/api", Tag: evil, Digest: "sha256:abc"}}}
	out := &gitcommit.Result{Changes: []hydrate.FileChange{{Path: "dev/" + evil + ".yaml"}}}
	title, summary := hydrateReport(nil, "dev", spec, "0123456789abcdef", res, out)
	if title != "No changes" {
		t.Errorf("title = %q", title)
	}
	want := "Hydrated `dev` (`` deploy/x` ![img](https://evil/x.png) @acme/admins ` ``) at 0123456: **2 resources**; " +
		"`hydrated:dev` already holds them, so nothing was committed.\n\n" +
		"Kinds: `ConfigMap`, `` x` ![img](https://evil/x.png) @acme/admins ` ``\n\n" +
		"Pinned images:\n- `` ghcr.io/acme/api:x` ![img](https://evil/x.png) @acme/admins ` `` → `sha256:abc`\n\n" +
		"<details><summary>Files changed</summary>\n\n" +
		"- write ``dev/x` ![img](https://evil/x.png) @acme/admins `.yaml``\n\n</details>\n"
	if summary != want {
		t.Errorf("summary =\n%q\nwant\n%q", summary, want)
	}
}
