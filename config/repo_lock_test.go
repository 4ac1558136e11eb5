package config

import (
	"strings"
	"testing"
)

func TestParseRepoLock(t *testing.T) {
	tests := []struct {
		name, file string
		want       []LockMode // per layer
		wantErr    string
	}{
		{name: "nothing set: on_plan (empty)", file: "version: 1\nlayers:\n  - dir: a\n", want: []LockMode{""}},
		{name: "file-wide mode for layers that set none", file: "version: 1\nlock: on_apply\nlayers:\n  - dir: a\n  - dir: b\n    lock: on_plan\n",
			want: []LockMode{LockOnApply, LockOnPlan}},
		{name: "file-wide key after the layers", file: "version: 1\nlayers:\n  - dir: a\nlock: on_apply\n", want: []LockMode{LockOnApply}},
		{name: "layer only", file: "version: 1\nlayers:\n  - dir: a\n    lock: on_apply\n  - dir: b\n", want: []LockMode{LockOnApply, ""}},
		{name: "unknown mode", file: "version: 1\nlayers:\n  - dir: a\n    lock: never\n",
			wantErr: `.strata.yaml:4: "lock" in layer "a" must be on_plan or on_apply, not "never"`},
		{name: "unknown file-wide mode", file: "version: 1\nlock: [on_apply]\n", wantErr: `"lock" in the file must be a string, not a list`},
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
				if l.Lock != tt.want[i] {
					t.Errorf("layer %s lock = %q, want %q", l.Name, l.Lock, tt.want[i])
				}
			}
		})
	}
}

// The lock mode is policy: a PR runs with the default branch's, whatever
// its own file says.
func TestEffectiveLock(t *testing.T) {
	parse := func(s string) *Repo {
		t.Helper()
		r, err := ParseRepo(".strata.yaml", []byte("version: 1\n"+s))
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	base := parse("layers:\n  - {name: net, dir: infra/net}\n  - {name: app, dir: infra/app, lock: on_apply}\n")
	applyWide := parse("lock: on_apply\nlayers:\n  - {name: net, dir: infra/net}\n")
	tests := []struct {
		name    string
		def, pr *Repo
		want    map[string]LockMode
	}{
		{name: "PR switches an on_plan layer to on_apply: still on_plan", def: base,
			pr: parse("layers:\n  - {name: net, dir: infra/net, lock: on_apply}\n"), want: map[string]LockMode{"net": LockOnPlan}},
		{name: "PR switches an on_apply layer to on_plan: still on_apply", def: base,
			pr: parse("layers:\n  - {name: app, dir: infra/app, lock: on_plan}\n"), want: map[string]LockMode{"app": LockOnApply}},
		{name: "PR sets the file-wide mode: ignored", def: base,
			pr:   parse("lock: on_apply\nlayers:\n  - {name: net, dir: infra/net}\n  - {name: new, dir: infra/new}\n"),
			want: map[string]LockMode{"net": LockOnPlan, "new": LockOnPlan}},
		{name: "PR renames an on_apply layer: matched by dir", def: base,
			pr: parse("layers:\n  - {name: app2, dir: infra/app}\n"), want: map[string]LockMode{"app2": LockOnApply}},
		{name: "PR gives an on_apply name to an on_plan dir: on_plan wins", def: base,
			pr: parse("layers:\n  - {name: app, dir: infra/net}\n"), want: map[string]LockMode{"app": LockOnPlan}},
		{name: "a layer only the PR defines gets the default branch's file-wide mode", def: applyWide,
			pr:   parse("layers:\n  - {name: net, dir: infra/net}\n  - {name: new, dir: infra/new, lock: on_plan}\n"),
			want: map[string]LockMode{"net": LockOnApply, "new": LockOnApply}},
		{name: "no file on the default branch: on_plan", pr: parse("lock: on_apply\nlayers:\n  - {name: new, dir: infra/new}\n"),
			want: map[string]LockMode{"new": LockOnPlan}},
		{name: "PR deletes the file: the default branch's modes", def: base,
			want: map[string]LockMode{"net": "", "app": LockOnApply}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Effective(tt.def, tt.pr, Policy{})
			if len(got.Layers) != len(tt.want) {
				t.Fatalf("layers = %+v", got.Layers)
			}
			for _, l := range got.Layers {
				if l.Lock != tt.want[l.Name] {
					t.Errorf("%s: lock = %q, want %q", l.Name, l.Lock, tt.want[l.Name])
				}
			}
		})
	}
}
