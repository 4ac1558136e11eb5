package syncs

import (
	"errors"
	"testing"
	"time"

	"strata.dev/strata/engine/hydrate"
	"strata.dev/strata/gitcommit"
)

// A hydration whose output differs from the destination's only in the
// source commit it names commits nothing; any other difference, a
// takeover's output or another repository's is committed.
func TestSameOutput(t *testing.T) {
	const a, b = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
	// deployment is the one resource hydrated, annotated with commit.
	deployment := func(commit, image string) string {
		return "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: api\n  annotations:\n    strata.dev/source-commit: '" + commit +
			"'\nspec:\n  template:\n    spec:\n      containers:\n      - image: " + image + "\n"
	}
	state := func(commit string) hydrate.SyncState {
		return hydrate.SyncState{SourceRepo: "acme/infra", Source: "deploy/overlays/dev", SourceCommit: commit}
	}
	output := func(commit, image string) map[string][]byte {
		st := state(commit)
		return map[string][]byte{"deployment_api.yaml": []byte(deployment(commit, image)), hydrate.SyncStateFile: st.Marshal()}
	}
	// held is the destination's tree under dev/, as blob SHAs.
	held := func(files map[string][]byte) map[string][]byte {
		out := map[string][]byte{"README.md": []byte(gitcommit.BlobSHA([]byte("outside dev/\n")))}
		for name, c := range files {
			out["dev/"+name] = []byte(gitcommit.BlobSHA(c))
		}
		return out
	}
	withFile := func(files map[string][]byte, name, content string) map[string][]byte {
		files[name] = []byte(content)
		return files
	}
	taken := state(a)
	taken.Takeover = &hydrate.Takeover{PR: 7, Until: time.Date(2026, 12, 5, 0, 0, 0, 0, time.UTC)}
	other := state(a)
	other.SourceRepo = "acme/other"
	stateOf := func(s hydrate.SyncState) *hydrate.SyncState { return &s }

	for _, tc := range []struct {
		name  string
		cur   *hydrate.SyncState
		held  map[string][]byte
		image string // the image of the output at b
		want  string
	}{
		{"only the source commit differs", stateOf(state(a)), held(output(a, "api:v1")), "api:v1", a},
		{"an image changed", stateOf(state(a)), held(output(a, "api:v1")), "api:v2", ""},
		{"a resource the output no longer has", stateOf(state(a)), held(withFile(output(a, "api:v1"), "service_api.yaml", "kind: Service\n")), "api:v1", ""},
		{"nothing hydrated yet", nil, map[string][]byte{}, "api:v1", ""},
		{"a takeover's output", &taken, held(output(a, "api:v1")), "api:v1", ""},
		{"another repository's output", &other, held(output(a, "api:v1")), "api:v1", ""},
		{"the same commit (a rehydration)", stateOf(state(b)), held(output(a, "api:v1")), "api:v1", ""},
		{"no commit recorded", stateOf(state("")), held(output("", "api:v1")), "api:v1", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			filesAt := func(commit string) (map[string][]byte, error) { return output(commit, tc.image), nil }
			got, err := sameOutput(tc.cur, tc.held, "dev", "acme/infra", b, filesAt)
			if err != nil || got != tc.want {
				t.Errorf("sameOutput = %q, %v; want %q", got, err, tc.want)
			}
		})
	}

	boom := errors.New("boom")
	if _, err := sameOutput(stateOf(state(a)), held(output(a, "api:v1")), "dev", "acme/infra", b,
		func(string) (map[string][]byte, error) { return nil, boom }); !errors.Is(err, boom) {
		t.Errorf("a failed render: %v", err)
	}
}
