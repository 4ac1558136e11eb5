package config

import (
	"strings"
	"testing"
)

func TestDestCommitMessageAndHydrateTo(t *testing.T) {
	sync := func(name, dest string) string {
		return "  - name: " + name + "\n    source: deploy/" + name + "\n    dest: " + dest + "\n"
	}
	for _, tc := range []struct {
		name  string
		syncs string
		want  string // "" when valid; else the error, with its line
	}{
		{name: "a template over the documented fields", syncs: sync("dev", `{branch: env, commit_message: "{{.Sync}}: {{.Subject}} by {{.Author}} ({{.ShortSHA}} of {{.SHA}} in {{.Repo}}, {{.Reason}})"}`)},
		{name: "if, len and slice", syncs: sync("dev", `{branch: env, commit_message: "{{if gt (len .Subject) 5}}{{slice .Subject 0 5}}{{else}}{{.Subject}}{{end}}"}`)},
		{name: "a staging branch", syncs: sync("dev", `{branch: env, hydrate_to: env-next}`)},
		{name: "an unknown field", syncs: sync("dev", `{branch: env, commit_message: "{{.Title}}"}`),
			want: `.strata.yaml:5: dest commit_message of sync "dev" commit_message:1:2: executing "commit_message" at <.Title>: can't evaluate field Title in type config.CommitMessageData; the fields are .Sync, .Repo, .SHA, .ShortSHA, .Subject, .Author and .Reason`},
		{name: "a template that does not parse", syncs: sync("dev", `{branch: env, commit_message: "{{.Subject"}`),
			want: `.strata.yaml:5: dest commit_message of sync "dev" commit_message:1: unclosed action`},
		{name: "an empty message", syncs: sync("dev", `{branch: env, commit_message: "{{if false}}x{{end}}  "}`),
			want: `.strata.yaml:5: dest commit_message of sync "dev" renders an empty message`},
		{name: "range loops", syncs: sync("dev", `{branch: env, commit_message: "{{range 1000000000}}{{end}}x"}`),
			want: `.strata.yaml:5: dest commit_message of sync "dev" uses range; a commit message template may not loop`},
		{name: "printf allocates what it is told", syncs: sync("dev", `{branch: env, commit_message: "{{printf \"%0999999999d\" 1}}"}`),
			want: `.strata.yaml:5: dest commit_message of sync "dev" calls printf, which a commit message template may not use`},
		{name: "define", syncs: sync("dev", `{branch: env, commit_message: "{{define \"x\"}}y{{end}}z"}`),
			want: `.strata.yaml:5: dest commit_message of sync "dev" defines the template "x"; a commit message is one template`},
		{name: "a template too long", syncs: sync("dev", `{branch: env, commit_message: "`+strings.Repeat("x", 5000)+`"}`),
			want: `.strata.yaml:5: dest commit_message of sync "dev" is 5000 bytes long; at most 4096`},
		{name: "hydrate_to not a branch", syncs: sync("dev", `{branch: env, hydrate_to: "a..b"}`),
			want: `.strata.yaml:3: dest hydrate_to "a..b" of sync "dev" is not a valid branch name`},
		{name: "hydrate_to its own dest branch", syncs: sync("dev", `{branch: env, hydrate_to: env}`),
			want: `.strata.yaml:3: dest hydrate_to of sync "dev" is its dest branch "env": name a staging branch to promote from by pull request`},
		{name: "one staging branch for two syncs", syncs: sync("dev", `{branch: env, path: dev, hydrate_to: next}`) + sync("qa", `{branch: env, path: qa, hydrate_to: next}`),
			want: `.strata.yaml:6: dest hydrate_to "next" of sync "qa" is also sync "dev"'s: each sync needs its own staging branch, for its own promotion pull request`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := ParseRepo(".strata.yaml", []byte("version: 1\nsyncs:\n"+tc.syncs))
			if err == nil {
				err = r.Validate(nil)
			}
			got := ""
			if err != nil {
				got = err.Error()
			}
			if got != tc.want {
				t.Errorf("error =\n%s\nwant\n%s", got, tc.want)
			}
		})
	}
}
