package config

import (
	"strings"
	"testing"
)

func TestParseRepoAutoApply(t *testing.T) {
	tests := []struct {
		name, file string
		want       []AutoApply // per layer
		wantErr    string
	}{
		{name: "nothing set: off (empty)", file: "version: 1\nlayers:\n  - dir: a\n", want: []AutoApply{""}},
		{name: "file-wide for layers that set none", file: "version: 1\nauto_apply: on_merge\nlayers:\n  - dir: a\n  - dir: b\n    auto_apply: off\n",
			want: []AutoApply{AutoApplyOnMerge, AutoApplyOff}},
		{name: "layer only", file: "version: 1\nlayers:\n  - dir: a\n    auto_apply: on_merge\n  - dir: b\n", want: []AutoApply{AutoApplyOnMerge, ""}},
		{name: "quoted off", file: "version: 1\nlayers:\n  - dir: a\n    auto_apply: \"off\"\n", want: []AutoApply{AutoApplyOff}},
		{name: "unknown value", file: "version: 1\nlayers:\n  - dir: a\n    auto_apply: on_push\n",
			wantErr: `.strata.yaml:4: "auto_apply" in layer "a" must be on_merge or off, not "on_push"`},
		{name: "not a string", file: "version: 1\nauto_apply: [on_merge]\n", wantErr: `"auto_apply" in the file must be a string, not a list`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := ParseRepo(".strata.yaml", []byte(tt.file))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for i, l := range r.Layers {
				if l.AutoApply != tt.want[i] {
					t.Errorf("layer %s auto_apply = %q, want %q", l.Name, l.AutoApply, tt.want[i])
				}
			}
		})
	}
}

// auto_apply is policy: a PR can neither turn it on for its own merge nor
// off, whatever its file says.
func TestEffectiveAutoApply(t *testing.T) {
	parse := func(s string) *Repo {
		t.Helper()
		r, err := ParseRepo(".strata.yaml", []byte("version: 1\n"+s))
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	base := parse("layers:\n  - {name: net, dir: infra/net}\n  - {name: app, dir: infra/app, auto_apply: on_merge}\n")
	tests := []struct {
		name    string
		def, pr *Repo
		want    map[string]AutoApply
	}{
		{name: "the PR turns it on for net and off for app: the default branch's stand", def: base,
			pr:   parse("auto_apply: on_merge\nlayers:\n  - {name: net, dir: infra/net}\n  - {name: app, dir: infra/app, auto_apply: off}\n"),
			want: map[string]AutoApply{"net": AutoApplyOff, "app": AutoApplyOnMerge}},
		{name: "a layer only the PR defines never applies on merge", def: base,
			pr:   parse("layers:\n  - {name: new, dir: infra/new, auto_apply: on_merge}\n"),
			want: map[string]AutoApply{"new": AutoApplyOff}},
		{name: "a renamed layer keeps its dir's setting", def: base,
			pr:   parse("layers:\n  - {name: application, dir: infra/app}\n"),
			want: map[string]AutoApply{"application": AutoApplyOnMerge}},
		{name: "the file-wide default of the default branch", def: parse("auto_apply: on_merge\nlayers:\n  - {name: net, dir: infra/net}\n"),
			pr:   parse("layers:\n  - {name: net, dir: infra/net, auto_apply: off}\n"),
			want: map[string]AutoApply{"net": AutoApplyOnMerge}},
		{name: "no file on the default branch: off", def: nil,
			pr:   parse("auto_apply: on_merge\nlayers:\n  - {name: net, dir: infra/net}\n"),
			want: map[string]AutoApply{"net": AutoApplyOff}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			eff := Effective(tt.def, tt.pr, Policy{})
			for _, l := range eff.Layers {
				if l.AutoApply != tt.want[l.Name] {
					t.Errorf("layer %s auto_apply = %q, want %q", l.Name, l.AutoApply, tt.want[l.Name])
				}
			}
			if len(eff.Layers) != len(tt.want) {
				t.Errorf("layers = %d, want %d", len(eff.Layers), len(tt.want))
			}
		})
	}
}
