package config

import (
	"strings"
	"testing"
)

func TestParseRepoState(t *testing.T) {
	tests := []struct {
		name, file string
		want       []StateMode // per layer
		wantErr    string
	}{
		{name: "nothing set: auto", file: "version: 1\nlayers:\n  - dir: a\n", want: []StateMode{StateAuto}},
		{name: "file-wide for layers that set none", file: "version: 1\nstate: own\nlayers:\n  - dir: a\n  - dir: b\n    state: managed\n",
			want: []StateMode{StateOwn, StateManaged}},
		{name: "unknown value", file: "version: 1\nlayers:\n  - dir: a\n    state: s3\n",
			wantErr: `"state" in layer "a" must be managed or own, not "s3"`},
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
				if l.State != tt.want[i] {
					t.Errorf("layer %s state = %q, want %q", l.Name, l.State, tt.want[i])
				}
			}
		})
	}
}

// state is policy: a PR can move no layer's state out of Strata, nor into it.
func TestEffectiveState(t *testing.T) {
	parse := func(s string) *Repo {
		t.Helper()
		r, err := ParseRepo(".strata.yaml", []byte("version: 1\n"+s))
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	base := parse("layers:\n  - {name: net, dir: infra/net}\n  - {name: app, dir: infra/app, state: own}\n")
	tests := []struct {
		name    string
		def, pr *Repo
		want    map[string]StateMode
	}{
		{"a PR sets own on a managed layer", base, parse("layers:\n  - {name: net, dir: infra/net, state: own}\n"),
			map[string]StateMode{"net": StateAuto}},
		{"a PR sets managed on an own layer", base, parse("state: managed\nlayers:\n  - {name: app, dir: infra/app}\n"),
			map[string]StateMode{"app": StateOwn}},
		{"a renamed layer keeps its dir's mode", base, parse("layers:\n  - {name: app2, dir: infra/app, state: managed}\n"),
			map[string]StateMode{"app2": StateOwn}},
		{"a new layer gets the default branch's file-wide mode", parse("state: own\nlayers: []\n"), parse("layers:\n  - {name: new, dir: new, state: managed}\n"),
			map[string]StateMode{"new": StateOwn}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := Effective(tt.def, tt.pr, Policy{})
			for _, l := range r.Layers {
				if l.State != tt.want[l.Name] {
					t.Errorf("layer %s state = %q, want %q", l.Name, l.State, tt.want[l.Name])
				}
			}
		})
	}
}
