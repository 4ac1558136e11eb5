package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fakeTree is a PathChecker over a list of files; their parent dirs exist too.
type fakeTree map[string]bool // path -> isDir

func newTree(files ...string) fakeTree {
	t := fakeTree{".": true}
	for _, f := range files {
		t[f] = false
		for d := filepath.Dir(f); d != "."; d = filepath.Dir(d) {
			t[filepath.ToSlash(d)] = true
		}
	}
	return t
}

func (t fakeTree) Stat(p string) (isDir, exists bool, err error) {
	isDir, exists = t[p]
	return isDir, exists, nil
}

var testTree = newTree(
	"infra/network/main.tf", "infra/network/prod.tfvars", "infra/base/main.tf", "infra/dns/main.tf",
	"deploy/dev/kustomization.yaml", "deploy/prod/kustomization.yaml",
	"charts/api/Chart.yaml", "charts/api/ci-values.yaml",
)

func TestValidate(t *testing.T) {
	tests := []struct {
		name string
		yaml string
		want []string // error prefixes in order; none means valid
	}{
		{
			name: "minimal layer",
			yaml: "version: 1\nlayers:\n  - dir: infra/network\n",
		},
		{
			name: "duplicate names",
			yaml: "version: 1\nlayers:\n  - {name: net, dir: infra/network}\n  - {name: net, dir: infra/dns}\n" +
				"syncs:\n  - {name: dev, source: deploy/dev, dest: {branch: h, path: a}}\n  - {name: dev, source: deploy/prod, dest: {branch: h, path: b}}\n" +
				"releases:\n  - {name: api, chart: charts/api}\n  - {name: api, chart: charts/api, release_name: 'other-{pr}'}\n",
			want: []string{
				`.strata.yaml:4: layer name "net" is used twice`,
				`.strata.yaml:7: sync name "dev" is used twice`,
				`.strata.yaml:10: release name "api" is used twice`,
			},
		},
		{
			name: "same dir and workspace",
			yaml: "version: 1\nlayers:\n  - {name: a, dir: infra/network}\n  - {name: b, dir: infra/network/}\n  - {name: c, dir: infra/network, workspace: prod}\n",
			want: []string{`.strata.yaml:4: layer "b" has the same dir and workspace as layer "a"`},
		},
		{
			name: "paths that leave the repo",
			yaml: "version: 1\nlayers:\n  - {name: a, dir: ../other}\n  - {name: b, dir: infra/../../b}\n  - {name: c, dir: /etc}\n" +
				"  - {name: d, dir: infra/network, var_files: [../../../x.tfvars], autoplan: {when_modified: ['../../../*.tf']}}\n" +
				"releases:\n  - {name: r, chart: charts/api, values: [charts/../../v.yaml]}\n",
			want: []string{
				`.strata.yaml:3: dir "../other" of layer "a": path leaves the repository`,
				`.strata.yaml:4: dir "../b" of layer "b": path leaves the repository`,
				`.strata.yaml:5: dir "/etc" of layer "c": absolute paths are not allowed`,
				`.strata.yaml:6: var_file "../x.tfvars" of layer "d": path leaves the repository`,
				`.strata.yaml:6: when_modified "../../../*.tf" of layer "d": path leaves the repository`,
				`.strata.yaml:8: values file "charts/../../v.yaml" of release "r": path leaves the repository`,
			},
		},
		{
			name: "missing paths and wrong kinds",
			yaml: "version: 1\nlayers:\n  - {dir: infra/gone}\n  - {dir: infra/network, var_files: [dev.tfvars, ../base]}\n" +
				"syncs:\n  - {name: dev, source: deploy/dev/kustomization.yaml, dest: {branch: h}}\n" +
				"releases:\n  - {name: api, chart: charts/web, values: [charts/api]}\n",
			want: []string{
				`.strata.yaml:3: dir "infra/gone" of layer "infra/gone" does not exist`,
				`.strata.yaml:4: var_file "infra/network/dev.tfvars" of layer "infra/network" does not exist`,
				`.strata.yaml:4: var_file "infra/base" of layer "infra/network" is a directory, not a file`,
				`.strata.yaml:6: source "deploy/dev/kustomization.yaml" of sync "dev" is not a directory`,
				`.strata.yaml:8: chart "charts/web" of release "api" does not exist`,
				`.strata.yaml:8: values file "charts/api" of release "api" is a directory, not a file`,
			},
		},
		{
			name: "names unusable in commands",
			yaml: "version: 1\nlayers:\n  - {name: 'net work', dir: infra/network}\nsyncs:\n  - {name: 2h, source: deploy/dev, dest: {branch: h}}\n",
			want: []string{
				`.strata.yaml:3: layer name "net work" cannot be used in commands`,
				`.strata.yaml:5: sync "2h": a sync name must not read as a duration`,
			},
		},
		{
			name: "bad glob",
			yaml: "version: 1\nlayers:\n  - {dir: infra/network, autoplan: {when_modified: ['[a-.tf']}}\n",
			want: []string{`.strata.yaml:3: when_modified "[a-.tf" of layer "infra/network" is not a valid glob`},
		},
		{
			name: "depends_on unknown and cycles",
			yaml: "version: 1\nlayers:\n  - {name: a, dir: infra/network, depends_on: [b]}\n  - {name: b, dir: infra/base, depends_on: [c]}\n" +
				"  - {name: c, dir: infra/dns, depends_on: [a, nope]}\n  - {name: d, dir: infra/dns, workspace: x, depends_on: [d]}\n",
			want: []string{
				`.strata.yaml:3: depends_on cycle: a -> b -> c -> a`,
				`.strata.yaml:5: layer "c" depends on "nope", which is not a layer`,
				`.strata.yaml:6: depends_on cycle: d -> d`,
			},
		},
		{
			name: "overlapping destinations",
			yaml: "version: 1\nsyncs:\n  - {name: a, source: deploy/dev, dest: {branch: h, path: env/dev}}\n" +
				"  - {name: b, source: deploy/dev, dest: {branch: h, path: env/dev/}}\n" +
				"  - {name: c, source: deploy/dev, dest: {branch: h, path: env}}\n" +
				"  - {name: d, source: deploy/dev, dest: {branch: other, path: env}}\n" +
				"  - {name: e, source: deploy/dev, dest: {repo: acme/gitops, branch: h, path: env}}\n" +
				"  - {name: f, source: deploy/dev, dest: {branch: h, path: env-dev}}\n" +
				"  - {name: g, source: deploy/dev, dest: {branch: other}}\n",
			want: []string{
				`.strata.yaml:4: dest "env/dev" of sync "b" overlaps dest "env/dev" of sync "a"`,
				`.strata.yaml:5: dest "env" of sync "c" overlaps dest "env/dev" of sync "a"`,
				`.strata.yaml:5: dest "env" of sync "c" overlaps dest "env/dev" of sync "b"`,
				`.strata.yaml:9: dest "." of sync "g" overlaps dest "env" of sync "d"`,
			},
		},
		{
			name: "bad destinations and takeover",
			yaml: "version: 1\nsyncs:\n  - {name: a, source: deploy/dev, dest: {repo: 'not a repo', branch: 'x..y', path: ../up}, takeover: {default: 1d, max: 12h}}\n",
			want: []string{
				`.strata.yaml:3: dest repo "not a repo" of sync "a" must be owner/name`,
				`.strata.yaml:3: dest branch "x..y" of sync "a" is not a valid branch name`,
				`.strata.yaml:3: dest path "../up" of sync "a": path leaves the repository`,
				`.strata.yaml:3: takeover default 1d of sync "a" is longer than its max 12h`,
			},
		},
		{
			name: "helm names",
			yaml: "version: 1\nreleases:\n  - {name: API, chart: charts/api}\n  - {name: b, chart: charts/api, release_name: '" + strings.Repeat("b", 50) + "-{pr}'}\n" +
				"  - {name: c, chart: charts/api, namespace: CI}\n  - {name: d, chart: charts/api, release_name: 'api-pr-{pr}'}\n" +
				"  - {name: e, chart: charts/api, release_name: shared, cluster: ci}\n  - {name: f, chart: charts/api, release_name: shared, cluster: ci2}\n" +
				"  - {name: g, chart: charts/api, release_name: shared, cluster: ci}\n",
			want: []string{
				`.strata.yaml:3: release_name "API-pr-{pr}" of release "API" must give a Helm release name`,
				`.strata.yaml:4: release_name "` + strings.Repeat("b", 50) + `-{pr}" of release "b" must give a Helm release name`,
				`.strata.yaml:5: namespace "CI" of release "c" is not a valid Kubernetes namespace`,
				`.strata.yaml:9: release "g" installs the same Helm release as release "e"`,
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := ParseRepo(".strata.yaml", []byte(tt.yaml))
			if err != nil {
				t.Fatalf("ParseRepo: %v", err)
			}
			err = r.Validate(testTree)
			if len(tt.want) == 0 {
				if err != nil {
					t.Fatalf("Validate: %v", err)
				}
				return
			}
			checkRepoErrors(t, err, tt.want)
		})
	}
}

func TestValidateVersion(t *testing.T) {
	err := (&Repo{File: ".strata.yaml"}).Validate(nil)
	checkRepoErrors(t, err, []string{".strata.yaml: version must be 1, not 0"})
}

func TestDirFS(t *testing.T) {
	outside := t.TempDir()
	root := t.TempDir()
	must(t, os.MkdirAll(filepath.Join(root, "infra", "net"), 0o755))
	must(t, os.WriteFile(filepath.Join(root, "infra", "net", "main.tf"), nil, 0o644))
	must(t, os.Symlink(outside, filepath.Join(root, "escape")))
	must(t, os.Symlink("net", filepath.Join(root, "infra", "alias")))
	tree := DirFS(root)
	tests := []struct {
		path          string
		isDir, exists bool
		wantErr       bool
	}{
		{path: "infra/net", isDir: true, exists: true},
		{path: "infra/net/main.tf", exists: true},
		{path: "infra/alias/main.tf", exists: true},
		{path: "infra/gone"},
		{path: "escape", wantErr: true},
		{path: "../x", wantErr: true},
	}
	for _, tt := range tests {
		isDir, exists, err := tree.Stat(tt.path)
		if isDir != tt.isDir || exists != tt.exists || (err != nil) != tt.wantErr {
			t.Errorf("Stat(%q) = %v, %v, %v; want %v, %v, error %v", tt.path, isDir, exists, err, tt.isDir, tt.exists, tt.wantErr)
		}
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
