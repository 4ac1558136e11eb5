package config

import (
	"errors"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestParseRepoGoodFile(t *testing.T) {
	data, err := os.ReadFile("testdata/repo/good.strata.yaml")
	if err != nil {
		t.Fatal(err)
	}
	got, err := ParseRepo(".strata.yaml", data)
	if err != nil {
		t.Fatalf("ParseRepo: %v", err)
	}
	want := &Repo{
		File:    ".strata.yaml",
		Version: 1,
		Layers: []Layer{
			{
				Name: "network", Dir: "infra/network", Workspace: "default", VarFiles: []string{"prod.tfvars"},
				Autoplan:          Autoplan{Enabled: true, WhenModified: []string{"*.tf", "*.tfvars", "../modules/**/*.tf"}},
				ApplyRequirements: []ApplyRequirement{Approved, Mergeable, Undiverged, CodeOwners},
				DependsOn:         []string{"base"},
				Line:              3,
			},
			{Name: "base", Dir: "infra/base", Workspace: "default", Autoplan: Autoplan{Enabled: true, WhenModified: DefaultWhenModified}, Line: 12},
			{Name: "infra/base@staging", Dir: "infra/base", Workspace: "staging", Autoplan: Autoplan{WhenModified: DefaultWhenModified}, Line: 14},
		},
		Syncs: []Sync{{
			Name: "dev", Source: "deploy/overlays/dev", Dest: Dest{Branch: "hydrated", Path: "dev"},
			Images: []Image{
				{Name: "ghcr.io/acme/api", Tag: SourceCommitTag, Pin: PinDigest},
				{Name: "ghcr.io/acme/worker", Tag: "v1.2.3"},
			},
			Takeover: Takeover{Default: 2 * time.Hour, Max: 12 * time.Hour},
			Line:     18,
		}},
		Releases: []Release{
			{
				Name: "api", Chart: "charts/api", ReleaseName: "api-pr-{pr}", Namespace: "ci",
				Values: []string{"charts/api/ci-values.yaml"}, Cluster: "ci",
				Test: ReleaseTest{Timeout: 5 * time.Minute, Filters: []string{}}, Remediation: RemediateNone,
				CleanupOnClose: true, Line: 26,
			},
			{
				Name: "web", Chart: "charts/api", ReleaseName: "web-pr-{pr}", Namespace: "default",
				Test: ReleaseTest{Timeout: 24 * time.Hour, Filters: []string{"smoke"}}, Remediation: RemediateRollback,
				CleanupOnClose: true, Line: 35,
			},
		},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("ParseRepo:\n got %+v\nwant %+v", got, want)
	}
	if err := got.Validate(DirFS("testdata/repo/tree")); err != nil {
		t.Errorf("Validate: %v", err)
	}
	if n := got.Releases[0].ReleaseNameFor(42); n != "api-pr-42" {
		t.Errorf("ReleaseNameFor(42) = %q", n)
	}
}

func TestParseRepoErrors(t *testing.T) {
	tests := []struct {
		name string
		yaml string
		want []string // each error, in order
	}{
		{
			name: "unknown key names file, line and layer",
			yaml: "version: 1\nlayers:\n  - name: network\n    dir: infra/network\n    autoplan:\n      enabled: true\n      wen_modified: ['*.tf']\n",
			want: []string{`.strata.yaml:7: unknown key "wen_modified" in autoplan of layer "network" (did you mean "when_modified"?)`},
		},
		{
			name: "unknown top-level key",
			yaml: "version: 1\nlayer: []\n",
			want: []string{`.strata.yaml:2: unknown key "layer" in the file (did you mean "layers"?)`},
		},
		{
			name: "several problems at once",
			yaml: "version: 1\nlayers:\n  - dir: a\n    workspce: x\n  - dir: b\n    var_files: prod.tfvars\nsyncs:\n  - name: dev\n    source: s\n    dest: {branch: h}\n    takeover: {default: soon}\n",
			want: []string{
				`.strata.yaml:4: unknown key "workspce" in layer "a" (did you mean "workspace"?)`,
				`.strata.yaml:6: "var_files" in layer "b" must be a list of strings, not "prod.tfvars"`,
				`.strata.yaml:11: "default" in takeover of sync "dev" must be a duration like 2h, 30m or 1d, not "soon"`,
			},
		},
		{
			name: "bad types",
			yaml: "version: 1\nlayers:\n  - dir: a\n    autoplan: {enabled: 'yes'}\n    depends_on: {x: y}\nreleases:\n  - name: r\n    chart: c\n    cleanup_on_close: 1\n    values: [[a]]\n",
			want: []string{
				`.strata.yaml:4: "enabled" in autoplan of layer "a" must be true or false, not "yes"`,
				`.strata.yaml:5: "depends_on" in layer "a" must be a list of strings, not a mapping`,
				`.strata.yaml:9: "cleanup_on_close" in release "r" must be true or false, not 1`,
				`.strata.yaml:10: an item of "values" in release "r" must be a string, not a list`,
			},
		},
		{
			name: "bad enums",
			yaml: "version: 1\nlayers:\n  - dir: a\n    apply_requirements: [approved, reviewed]\nsyncs:\n  - name: s\n    source: s\n    dest: {branch: b}\n    images: [{name: i, tag: 'bad tag', pin: sha}]\nreleases:\n  - {name: r, chart: c, remediation: retry}\n",
			want: []string{
				`.strata.yaml:4: "apply_requirements" in layer "a": unknown requirement "reviewed" (approved, mergeable, undiverged or codeowners)`,
				`.strata.yaml:9: tag "bad tag" of image of sync "s" is neither "source-commit" nor a valid image tag`,
				`.strata.yaml:9: pin "sha" of image of sync "s" must be "digest" or empty`,
				`.strata.yaml:11: "remediation" in release "r" must be none, rollback or uninstall, not "retry"`,
			},
		},
		{
			name: "missing required keys",
			yaml: "version: 1\nlayers:\n  - workspace: prod\nsyncs:\n  - source: s\n    dest: {path: x}\nreleases:\n  - name: r\n",
			want: []string{
				`.strata.yaml:3: layer at line 3 needs "dir"`,
				`.strata.yaml:5: sync at line 5 needs "name"`,
				`.strata.yaml:6: dest of sync at line 5 needs "branch"`,
				`.strata.yaml:8: release "r" needs "chart"`,
			},
		},
		{
			name: "non-positive duration",
			yaml: "version: 1\nreleases:\n  - {name: r, chart: c, test: {timeout: 0s}}\n",
			want: []string{`.strata.yaml:3: "timeout" in test of release "r" must be positive, not "0s"`},
		},
		{
			name: "repeated key",
			yaml: "version: 1\nlayers:\n  - dir: a\n    dir: b\n",
			want: []string{`.strata.yaml:4: key "dir" repeated in layer "a"`},
		},
		{
			name: "wrong version",
			yaml: "version: 2\n",
			want: []string{`.strata.yaml:1: version must be 1, not 2`},
		},
		{
			name: "missing version",
			yaml: "layers: []\n",
			want: []string{`.strata.yaml:1: version: 1 is required`},
		},
		{
			name: "empty file",
			yaml: "# nothing yet\n",
			want: []string{`.strata.yaml: version: 1 is required`},
		},
		{
			name: "not a mapping",
			yaml: "- version: 1\n",
			want: []string{`.strata.yaml:1: the file must be a mapping, not a list`, `.strata.yaml:1: version: 1 is required`},
		},
		{
			name: "invalid YAML",
			yaml: "version: 1\nlayers:\n  - dir: a\n   bad: [\n",
			want: []string{`.strata.yaml:2: invalid YAML: did not find expected '-' indicator`},
		},
		{
			name: "unknown keys are not walked",
			yaml: "version: 1\nx: &a [{dir: a}]\n",
			want: []string{`.strata.yaml:2: unknown key "x" in the file`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := ParseRepo(".strata.yaml", []byte(tt.yaml))
			if r != nil {
				t.Errorf("ParseRepo returned a config with errors: %+v", r)
			}
			checkRepoErrors(t, err, tt.want)
		})
	}
}

func TestParseRepoStopsAliasExpansion(t *testing.T) {
	// 300 aliases of a layer whose var_files alias 1000 names: 300,000 nodes
	// to walk from a file of a few kilobytes.
	var b strings.Builder
	b.WriteString("version: 1\nlayers:\n  - &l {dir: x, var_files: &big [" + strings.Repeat("a, ", 999) + "a]}\n")
	b.WriteString(strings.Repeat("  - *l\n", 300))
	_, err := ParseRepo(".strata.yaml", []byte(b.String()))
	if err == nil || !strings.Contains(err.Error(), "too many YAML nodes") {
		t.Fatalf("ParseRepo of an alias bomb: %v", err)
	}
}

// checkRepoErrors checks that err is RepoErrors with exactly the wanted
// messages, each given as a prefix.
func checkRepoErrors(t *testing.T, err error, want []string) {
	t.Helper()
	var list RepoErrors
	if !errors.As(err, &list) {
		t.Fatalf("error %v (%T) is not RepoErrors; want %q", err, err, want)
	}
	if len(list) != len(want) {
		t.Fatalf("got %d errors, want %d:\n%v", len(list), len(want), err)
	}
	for i, e := range list {
		if !strings.HasPrefix(e.Error(), want[i]) {
			t.Errorf("error %d:\n got %s\nwant %s", i, e, want[i])
		}
	}
}
