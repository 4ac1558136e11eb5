package config

import (
	"k8s.io/apimachinery/pkg/labels"
	"reflect"
	"strings"
	"testing"
)

// treeOf is a PathChecker over a list of paths; a trailing / is a directory.
type treeOf []string

func (t treeOf) Stat(p string) (bool, bool, error) {
	for _, e := range t {
		if strings.TrimSuffix(e, "/") == p {
			return strings.HasSuffix(e, "/"), true, nil
		}
	}
	return false, false, nil
}

func TestSyncDiscoveryParse(t *testing.T) {
	for _, tc := range []struct {
		name, yaml string
		errs       []string
		matches    map[string]bool // labels "k=v,k=v" -> matched
	}{
		{name: "globs and a selector with both forms", yaml: `version: 1
sync_discovery:
  globs: ["**/strata-sync.yaml"]
  selector:
    matchLabels: {env: dev}
    matchExpressions: [{key: tier, operator: In, values: [web, api]}]
`, matches: map[string]bool{"env=dev,tier=web": true, "env=dev,tier=db": false, "env=prod,tier=web": false, "env=dev": false}},
		{name: "no selector keeps every file", yaml: "version: 1\nsync_discovery: {globs: [\"deploy/*/sync.yaml\"]}\n",
			matches: map[string]bool{"": true, "env=prod": true}},
		{name: "an empty selector keeps every file, as in Kubernetes", yaml: "version: 1\nsync_discovery: {globs: [a.yaml], selector: {}}\n",
			matches: map[string]bool{"": true, "env=prod": true}},
		{name: "a bad operator", yaml: `version: 1
sync_discovery:
  globs: [a.yaml]
  selector:
    matchExpressions: [{key: tier, operator: Near, values: [web]}]
`, errs: []string{`.strata.yaml:5: selector of sync_discovery: "Near" is not a valid label selector operator`}},
		{name: "a bad label key", yaml: "version: 1\nsync_discovery:\n  globs: [a.yaml]\n  selector: {matchLabels: {\"-x\": y}}\n",
			errs: []string{`.strata.yaml:4: selector of sync_discovery: key: Invalid value: "-x"`}},
		{name: "an unknown key in the selector", yaml: "version: 1\nsync_discovery:\n  globs: [a.yaml]\n  selector: {matchLabel: {a: b}}\n",
			errs: []string{`.strata.yaml:4: unknown key "matchLabel" in selector of sync_discovery`}},
		{name: "globs that leave the tree or are absolute", yaml: "version: 1\nsync_discovery:\n  globs: [\"../x/*.yaml\", \"/etc/*.yaml\", \"a/[b\"]\n",
			errs: []string{`.strata.yaml:3: glob "../x/*.yaml" of sync_discovery: segments . .. and empty ones are not allowed`,
				`.strata.yaml:3: glob "/etc/*.yaml" of sync_discovery: globs are relative to the repository root`,
				`.strata.yaml:3: glob "a/[b" of sync_discovery: not a valid pattern`}},
		{name: "no globs", yaml: "version: 1\nsync_discovery: {selector: {matchLabels: {a: b}}}\n",
			errs: []string{`.strata.yaml:2: sync_discovery needs "globs"`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := ParseRepo(RepoFile, []byte(tc.yaml))
			if len(tc.errs) > 0 {
				if err == nil {
					t.Fatal("parsed")
				}
				for _, want := range tc.errs {
					if !strings.Contains(err.Error(), want) {
						t.Errorf("errors\n%s\nlack %q", err, want)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for set, want := range tc.matches {
				l := map[string]string{}
				for _, kv := range strings.Split(set, ",") {
					if k, v, ok := strings.Cut(kv, "="); ok {
						l[k] = v
					}
				}
				got := r.Discovery.Selector == nil || r.Discovery.Selector.Matches(labelSet(l))
				if got != want {
					t.Errorf("labels %q: matched %v, want %v", set, got, want)
				}
			}
		})
	}
}

func TestSyncDiscoveryCandidates(t *testing.T) {
	disc := &SyncDiscovery{Globs: []string{"**/strata-sync.yaml", "envs/*/sync.yaml"}}
	tree := map[string]bool{
		"strata-sync.yaml": false, "a/b/strata-sync.yaml": false, "a/strata-sync.yml": false,
		"dir/strata-sync.yaml": true, "envs/dev/sync.yaml": false, "envs/dev/x/sync.yaml": false,
	}
	got := disc.Candidates(tree)
	want := []string{"a/b/strata-sync.yaml", "envs/dev/sync.yaml", "strata-sync.yaml"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %q, want %q", got, want)
	}
}

func syncFile(name, labels, spec string) string {
	return "apiVersion: strata.dev/v1\nkind: Sync\nmetadata:\n  name: " + name + "\n  labels: {" + labels + "}\nspec:\n" + spec
}

func TestDiscover(t *testing.T) {
	r, err := ParseRepo(RepoFile, []byte(`version: 1
sync_discovery:
  globs: ["**/strata-sync.yaml"]
  selector: {matchLabels: {env: dev}}
syncs:
  - name: listed
    source: base
    dest: {branch: hydrated, path: listed}
`))
	if err != nil {
		t.Fatal(err)
	}
	tree := treeOf{"base/", "apps/api/", "apps/web/", "apps/db/", "apps/api/overlay/"}
	files := []SyncFile{
		{"apps/api/strata-sync.yaml", []byte(syncFile("api", "env: dev", "  source: overlay\n  dest: {branch: hydrated, path: api}\n  validate: block\n"))},
		{"apps/db/strata-sync.yaml", []byte(syncFile("db", "env: prod", "  source: .\n  dest: {branch: hydrated, path: db}\n"))},
		{"apps/dup/strata-sync.yaml", []byte(syncFile("listed", "env: dev", "  source: ../api\n  dest: {branch: hydrated, path: other}\n"))},
		{"apps/over/strata-sync.yaml", []byte(syncFile("over", "env: dev", "  source: ../web\n  dest: {branch: hydrated, path: api/sub}\n"))},
		{"apps/typo/strata-sync.yaml", []byte(syncFile("typo", "env: dev", "  source: ../web\n  dest: {branch: hydrated, path: typo}\n  imagez: []\n"))},
		{"apps/web/strata-sync.yaml", []byte(syncFile("web", "env: dev", "  source: .\n  dest: {branch: hydrated, path: web}\n"))},
		{"apps/web2/strata-sync.yaml", []byte(syncFile("web", "env: dev", "  source: ../web\n  dest: {branch: hydrated, path: web2}\n"))},
		{"apps/bad/strata-sync.yaml", []byte("apiVersion: strata.dev/v1\nkind: Sync\nmetadata: {name: bad\nspec: {}\n")},
		{"apps/gone/strata-sync.yaml", []byte(syncFile("gone", "env: dev", "  source: missing\n  dest: {branch: hydrated, path: gone}\n"))},
		{"apps/kind/strata-sync.yaml", []byte("apiVersion: strata.dev/v1\nkind: Application\nmetadata: {name: k}\nspec: {}\n")},
	}
	got := Discover(r.Discovery, RepoFile, r.Syncs, files, tree)
	var names []string
	for _, s := range got.Syncs {
		names = append(names, s.Name+" "+s.Source+" "+s.File+" "+s.Validate)
	}
	if want := []string{"api apps/api/overlay apps/api/strata-sync.yaml block", "web apps/web apps/web/strata-sync.yaml "}; !reflect.DeepEqual(names, want) {
		t.Errorf("kept\n%q\nwant\n%q", names, want)
	}
	if want := []string{"db (apps/db/strata-sync.yaml)"}; !reflect.DeepEqual(got.Skipped, want) {
		t.Errorf("skipped %q, want %q", got.Skipped, want)
	}
	var problems []string
	for _, p := range got.Problems {
		problems = append(problems, p.Sync+": "+p.Error())
	}
	want := []string{
		`: apps/dup/strata-sync.yaml:1: sync "listed" is also defined at .strata.yaml:6; rename one of them`,
		`over: apps/over/strata-sync.yaml:1: dest "api/sub" of sync "over" overlaps dest "api" of sync "api" (apps/api/strata-sync.yaml:1) on branch "hydrated"`,
		`typo: apps/typo/strata-sync.yaml:9: unknown key "imagez" in sync "typo" (did you mean "images"?)`,
		`: apps/web2/strata-sync.yaml:1: sync "web" is also defined at apps/web/strata-sync.yaml:1; rename one of them`,
		`: apps/bad/strata-sync.yaml:2: invalid YAML: did not find expected ',' or '}'`,
		`gone: apps/gone/strata-sync.yaml:1: source "apps/gone/missing" of sync "gone" does not exist`,
		`k: apps/kind/strata-sync.yaml:1: kind must be Sync, not "Application"`,
	}
	if !reflect.DeepEqual(problems, want) {
		t.Errorf("problems\n%s\nwant\n%s", strings.Join(problems, "\n"), strings.Join(want, "\n"))
	}
}

func labelSet(m map[string]string) labels.Set { return labels.Set(m) }

// A PR can neither turn validate: block off for a sync of the default
// branch nor choose it for a sync only it defines (the server's applies).
func TestEffectiveValidateFromDefaultBranch(t *testing.T) {
	parse := func(text string) *Repo {
		r, err := ParseRepo(RepoFile, []byte(text))
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	base := parse("version: 1\nsyncs:\n  - {name: dev, source: a, dest: {branch: h}, validate: block}\n")
	pr := parse("version: 1\nsync_discovery: {globs: [\"**\"]}\nsyncs:\n  - {name: dev, source: a, dest: {branch: h}, validate: \"off\"}\n  - {name: new, source: a, dest: {branch: h, path: n}, validate: block}\n")
	eff := Effective(base, pr, Policy{})
	if got := eff.Syncs[0].Validate + "," + eff.Syncs[1].Validate; got != "block," {
		t.Errorf("validate = %q, want block and the server's", got)
	}
	if eff.Discovery != nil {
		t.Errorf("a PR's sync_discovery counted: %+v", eff.Discovery)
	}
}
