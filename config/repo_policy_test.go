package config

import (
	"reflect"
	"testing"
	"time"
)

func TestEffective(t *testing.T) {
	strict := []ApplyRequirement{Approved, Mergeable}
	base := &Repo{
		File: ".strata.yaml", Version: 1,
		Layers: []Layer{
			{Name: "network", Dir: "infra/network", Workspace: "default", ApplyRequirements: strict},
			{Name: "dns", Dir: "infra/dns", Workspace: "default", ApplyRequirements: []ApplyRequirement{Undiverged}},
			{Name: "sandbox", Dir: "infra/sandbox", Workspace: "default"},
		},
		Syncs: []Sync{{Name: "dev", Source: "deploy/dev", Dest: Dest{Branch: "hydrated", Path: "dev"},
			Takeover: Takeover{Default: 2 * time.Hour, Max: 12 * time.Hour}}},
		Releases: []Release{{Name: "api", Chart: "charts/api", ReleaseName: "api-pr-{pr}", Namespace: "ci", Cluster: "ci"}},
	}
	tests := []struct {
		name      string
		def, pr   *Repo
		check     func(t *testing.T, got *Repo)
		wantEqual *Repo
	}{
		{name: "no file anywhere", wantEqual: nil},
		{name: "file only on the default branch: a PR deleting it keeps it", def: base, wantEqual: base},
		{
			name: "file only on the PR: its layers get the server's requirements, its syncs are proposed",
			pr:   base,
			check: func(t *testing.T, got *Repo) {
				for _, l := range got.Layers {
					if !reflect.DeepEqual(l.ApplyRequirements, strict) {
						t.Errorf("%s requirements = %v, want %v", l.Name, l.ApplyRequirements, strict)
					}
				}
				if !got.Syncs[0].Proposed {
					t.Errorf("sync %+v is not marked proposed", got.Syncs[0])
				}
			},
		},
		{
			name: "PR drops apply requirements: they come back",
			def:  base,
			pr:   &Repo{Version: 1, Layers: []Layer{{Name: "network", Dir: "infra/network", Workspace: "default"}}},
			check: func(t *testing.T, got *Repo) {
				if !reflect.DeepEqual(got.Layers[0].ApplyRequirements, strict) {
					t.Errorf("requirements = %v, want %v", got.Layers[0].ApplyRequirements, strict)
				}
			},
		},
		{
			name: "PR renames a layer: matched by dir",
			def:  base,
			pr:   &Repo{Version: 1, Layers: []Layer{{Name: "net2", Dir: "infra/network", Workspace: "default"}}},
			check: func(t *testing.T, got *Repo) {
				if !reflect.DeepEqual(got.Layers[0].ApplyRequirements, strict) {
					t.Errorf("requirements = %v, want %v", got.Layers[0].ApplyRequirements, strict)
				}
			},
		},
		{
			name: "PR gives a lax layer's name to a strict dir: both count",
			def:  base,
			pr:   &Repo{Version: 1, Layers: []Layer{{Name: "dns", Dir: "infra/network", Workspace: "default"}}},
			check: func(t *testing.T, got *Repo) {
				want := []ApplyRequirement{Approved, Mergeable, Undiverged}
				if !reflect.DeepEqual(got.Layers[0].ApplyRequirements, want) {
					t.Errorf("requirements = %v, want %v", got.Layers[0].ApplyRequirements, want)
				}
			},
		},
		{
			name: "PR adds requirements to a layer without any: default branch wins",
			def:  base,
			pr:   &Repo{Version: 1, Layers: []Layer{{Name: "sandbox", Dir: "infra/sandbox", Workspace: "default", ApplyRequirements: strict}}},
			check: func(t *testing.T, got *Repo) {
				if len(got.Layers[0].ApplyRequirements) != 0 {
					t.Errorf("requirements = %v, want none", got.Layers[0].ApplyRequirements)
				}
			},
		},
		{
			name: "PR adds a layer, a sync and a release: the strictest policy, never its own",
			def:  base,
			pr: &Repo{Version: 1,
				Layers:   []Layer{{Name: "new", Dir: "infra/new", Workspace: "default", ApplyRequirements: []ApplyRequirement{Undiverged}}},
				Syncs:    []Sync{{Name: "qa", Dest: Dest{Branch: "hydrated", Path: "qa"}}},
				Releases: []Release{{Name: "web", ReleaseName: "web-{pr}", Namespace: "web", Cluster: "ci"}},
			},
			check: func(t *testing.T, got *Repo) {
				if got.Layers[0].Name != "new" || !reflect.DeepEqual(got.Layers[0].ApplyRequirements, strict) {
					t.Errorf("PR-only layer = %+v, want the server's requirements %v", got.Layers[0], strict)
				}
				if !got.Syncs[0].Proposed {
					t.Errorf("PR-only sync = %+v, want it proposed", got.Syncs[0])
				}
				if got.Releases[0].Namespace != "web" {
					t.Errorf("release = %+v", got.Releases[0])
				}
			},
		},
		{
			name: "PR turns cleanup of a shared release off: the default branch decides",
			def:  &Repo{Version: 1, Releases: []Release{{Name: "api", ReleaseName: "api", Namespace: "ci", Cluster: "ci", CleanupOnClose: true}}},
			pr:   &Repo{Version: 1, Releases: []Release{{Name: "api", ReleaseName: "api", Namespace: "ci", Cluster: "ci", CleanupOnClose: false}}},
			check: func(t *testing.T, got *Repo) {
				if !got.Releases[0].CleanupOnClose {
					t.Errorf("release = %+v, want cleanup_on_close from the default branch", got.Releases[0])
				}
			},
		},
		{
			name: "PR redirects a sync and a release: destination and target come from the default branch",
			def:  base,
			pr: &Repo{Version: 1,
				Syncs: []Sync{{Name: "dev", Source: "deploy/other", Dest: Dest{Repo: "acme/prod", Branch: "main", Path: "."},
					Takeover: Takeover{Default: 24 * time.Hour, Max: 720 * time.Hour}}},
				Releases: []Release{{Name: "api", Chart: "charts/api2", ReleaseName: "prod-api", Namespace: "prod", Cluster: "prod"}},
			},
			check: func(t *testing.T, got *Repo) {
				s, r := got.Syncs[0], got.Releases[0]
				if s.Source != "deploy/other" || s.Dest != base.Syncs[0].Dest || s.Takeover != base.Syncs[0].Takeover {
					t.Errorf("sync = %+v", s)
				}
				if r.Chart != "charts/api2" || r.ReleaseName != "api-pr-{pr}" || r.Namespace != "ci" || r.Cluster != "ci" {
					t.Errorf("release = %+v", r)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Effective(tt.def, tt.pr, Policy{ApplyRequirements: strict})
			if tt.check != nil {
				tt.check(t, got)
				return
			}
			if !reflect.DeepEqual(got, tt.wantEqual) {
				t.Errorf("Effective = %+v, want %+v", got, tt.wantEqual)
			}
		})
	}
}

func TestEffectiveSharesNothing(t *testing.T) {
	def := &Repo{Layers: []Layer{{Name: "a", ApplyRequirements: []ApplyRequirement{Approved}}}}
	pr := &Repo{Layers: []Layer{{Name: "a", DependsOn: []string{"b"}}}}
	got := Effective(def, pr, Policy{})
	got.Layers[0].ApplyRequirements[0] = Mergeable
	got.Layers[0].DependsOn[0] = "c"
	if def.Layers[0].ApplyRequirements[0] != Approved || pr.Layers[0].DependsOn[0] != "b" {
		t.Error("Effective's result shares slices with its arguments")
	}
}
