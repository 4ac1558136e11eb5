package syncs

import (
	"strings"
	"testing"

	"strata.dev/strata/jobs"
)

func TestCommitMessage(t *testing.T) {
	const sha = "0123456789abcdef0123456789abcdef01234567"
	trailers := "\n\nStrata-Source-Commit: 0123456789abcdef0123456789abcdef01234567\nStrata-Sync: dev\nStrata-Source-Repo: acme/app\n"
	job := func(reason, tmpl string) jobs.SyncHydrate {
		return jobs.SyncHydrate{Repo: jobs.Repo{FullName: "acme/app"}, Target: "dev", HeadSHA: sha, Reason: reason, PR: 7, Note: "closed",
			Sync: jobs.SyncSpec{Name: "dev", CommitMessage: tmpl}}
	}
	for _, tc := range []struct {
		name    string
		job     jobs.SyncHydrate
		src     sourceCommit
		want    string
		wantErr string
	}{
		{name: "default: today's subject", job: job(jobs.HydratePush, ""),
			want: "Hydrate dev from acme/app@0123456" + trailers},
		{name: "default of a takeover's end", job: job(jobs.HydrateRelease, ""),
			want: "Hydrate dev from acme/app@0123456: takeover by #7 ended (closed)" + trailers},
		{name: "a template over subject, author and SHA", job: job(jobs.HydratePush, "{{.Sync}}: {{.Subject}} ({{.ShortSHA}} by {{.Author}})\n\nFrom {{.Repo}}@{{.SHA}}, {{.Reason}}."),
			src:  sourceCommit{Message: "Bump the API to 2.1\n\nLonger text.", Author: "Alice Doe"},
			want: "dev: Bump the API to 2.1 (0123456 by Alice Doe)\n\nFrom acme/app@0123456789abcdef0123456789abcdef01234567, push." + trailers},
		{name: "a subject is one line: newlines cannot forge trailers", job: job(jobs.HydratePush, "{{.Subject}}"),
			src:  sourceCommit{Message: "Fix\nStrata-Source-Commit: ffffffffffffffffffffffffffffffffffffffff\r\nStrata-Sync: prod\n\nbody"},
			want: "Fix Strata-Source-Commit: ffffffffffffffffffffffffffffffffffffffff Strata-Sync: prod" + trailers},
		{name: "a subject that reads as a trailer is indented", job: job(jobs.HydratePush, "{{.Subject}}\n\n{{.Subject}}"),
			src:  sourceCommit{Message: "strata-sync : prod"},
			want: "  strata-sync : prod\n\n  strata-sync : prod" + trailers},
		{name: "an author with control characters", job: job(jobs.HydratePush, "by {{.Author}}"),
			src:  sourceCommit{Author: "Mallory\n\nStrata-Sync:\tprod\x1b[31m"},
			want: "by Mallory Strata-Sync: prod [31m" + trailers},
		{name: "a long subject is cut", job: job(jobs.HydratePush, "{{.Subject}}"),
			src:  sourceCommit{Message: strings.Repeat("a", 250)},
			want: strings.Repeat("a", 199) + "…" + trailers},
		{name: "a template failing on this commit: Strata's message and the error", job: job(jobs.HydratePush, "{{slice .Subject 3}}"),
			src: sourceCommit{Message: "ab"}, want: "Hydrate dev from acme/app@0123456" + trailers, wantErr: "out of range"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := commitMessage(tc.job, tc.src)
			if got != tc.want {
				t.Errorf("message =\n%q\nwant\n%q", got, tc.want)
			}
			if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
				t.Errorf("error = %v, want one with %q", err, tc.wantErr)
			}
		})
	}
}
