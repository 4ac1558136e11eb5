package config

import (
	"strings"
	"testing"
)

// A layer names its engine, or takes the file's; naming none is terraform.
func TestRepoEngine(t *testing.T) {
	for _, tc := range []struct {
		name string
		yaml string
		want map[string]string // layer -> Engine
	}{
		{"none named", "version: 1\nlayers:\n  - dir: a\n", map[string]string{"a": ""}},
		{"a layer's own", "version: 1\nlayers:\n  - dir: a\n    engine: tofu\n  - dir: b\n", map[string]string{"a": "tofu", "b": ""}},
		{"the file's, after the layers", "version: 1\nlayers:\n  - dir: a\n  - dir: b\n    engine: terraform\nengine: tofu\n",
			map[string]string{"a": "tofu", "b": "terraform"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := ParseRepo(".strata.yaml", []byte(tc.yaml))
			if err != nil {
				t.Fatal(err)
			}
			for _, l := range r.Layers {
				if l.Engine != tc.want[l.Name] {
					t.Errorf("layer %s: engine %q, want %q", l.Name, l.Engine, tc.want[l.Name])
				}
			}
		})
	}
}

func TestRepoEngineErrors(t *testing.T) {
	for _, tc := range []struct{ yaml, want string }{
		{"version: 1\nlayers:\n  - dir: a\n    engine: opentofu\n", `.strata.yaml:4: "engine" in layer "a": want terraform or tofu, not "opentofu"`},
		{"version: 1\nengine: [tofu]\nlayers:\n  - dir: a\n", `.strata.yaml:2: "engine" in the file must be a string, not a list`},
	} {
		_, err := ParseRepo(".strata.yaml", []byte(tc.yaml))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: err = %v, want %q", tc.yaml, err, tc.want)
		}
	}
}

// The PR's file chooses the engine: it only picks which of the operator's
// binaries runs.
func TestEffectiveEngineIsThePRs(t *testing.T) {
	base, err := ParseRepo(".strata.yaml", []byte("version: 1\nlayers:\n  - dir: a\n"))
	if err != nil {
		t.Fatal(err)
	}
	pr, err := ParseRepo(".strata.yaml", []byte("version: 1\nlayers:\n  - dir: a\n    engine: tofu\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got := Effective(base, pr, Policy{}).Layers[0].Engine; got != EngineTofu {
		t.Errorf("engine = %q, want the PR's tofu", got)
	}
}
